package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/ballastdev/ballast/workers"
)

// runChaos injects the failures elastic capacity brings, for demos and
// drills: `chaos spot-notice WORKER` plays the provider announcing that a
// spot worker will be reclaimed.
func runChaos(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] != "spot-notice" {
		return usageError{"use: ballast chaos spot-notice [--in 30s] WORKER"}
	}
	fs := newFlags(e, "chaos spot-notice", "chaos spot-notice [--config FILE] [--in 30s] WORKER")
	cfgPath := configFlag(fs)
	in := fs.Duration("in", 30*time.Second, "notice before the machine goes: jobs checkpoint and requeue within it")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"name the worker (see ballast status)"}
	}
	if *in < 0 {
		return usageError{"--in must not be negative"}
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	nc, err := connectNATS(cfg, "ballast-chaos")
	if err != nil {
		return err
	}
	defer nc.Close()
	msg := workers.ControlMessage{Action: workers.ControlSpotNotice, NoticeSeconds: int(in.Seconds())}
	if err := workers.NotifyControl(nc, subjects(cfg), fs.Arg(0), msg); err != nil {
		return err
	}
	if err := nc.FlushTimeout(2 * time.Second); err != nil {
		return err
	}
	fmt.Fprintf(e.out, "spot notice sent to %s: its jobs checkpoint and go back to burst within %s, then it exits\n", fs.Arg(0), *in)
	return nil
}
