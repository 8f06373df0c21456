// Command ballast-tools is ballast with the developer tools added: the
// benchmarks (bench, bench-hybrid) and the dashboard screenshot. Every
// ballast command works in it too, so bench-hybrid's elastic workers,
// which are children of this binary, run from it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/ballastdev/ballast/internal/cli"
	"github.com/ballastdev/ballast/internal/tools/devtools"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.RunWith(ctx, os.Args[1:], os.Stdout, os.Stderr, devtools.Commands())
	stop()
	os.Exit(code)
}
