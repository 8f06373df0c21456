// Command ballast is Ballast's single binary: controller, worker, dev mode and
// the operator's CLI. See `ballast help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/ballastdev/ballast/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := startProfile()
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfile()
	stop()
	os.Exit(code)
}
