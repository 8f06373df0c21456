package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/workers"
)

// chaosUsage lists the chaos subcommands.
const chaosUsage = "use: ballast chaos spot-notice [--in 30s] WORKER | ballast chaos run [--jobs 1000] [--faults all] (-h for flags)"

// runChaos injects failures, for demos, drills and CI: `chaos spot-notice
// WORKER` plays the provider announcing that a spot worker will be
// reclaimed; `chaos run` runs a whole installation under every fault and
// counts what became of each job.
func runChaos(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usageError{chaosUsage}
	}
	switch args[0] {
	case "spot-notice":
		return runSpotNotice(ctx, e, args[1:])
	case "run":
		return runChaosRun(ctx, e, args[1:])
	}
	return usageError{fmt.Sprintf("unknown chaos subcommand %q; %s", args[0], chaosUsage)}
}

// runSpotNotice records a spot notice for a worker and wakes it.
func runSpotNotice(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "chaos spot-notice", "chaos spot-notice [--config FILE] [--in 30s] WORKER")
	cfgPath := configFlag(fs)
	in := fs.Duration("in", 30*time.Second, "notice before the machine goes: jobs checkpoint and requeue within it")
	if err := parse(fs, args); err != nil {
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
	store, closeStore, err := storeFor(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	id := fs.Arg(0)
	// The notice is recorded first, where the worker's heartbeat reads it
	// (and only for a spot worker); the message is only the wake-up, so a
	// failure to send it delays the notice by a heartbeat at most.
	if err := registry.New(store).RequestSpotNotice(ctx, id, time.Now().Add(*in)); err != nil {
		return fmt.Errorf("chaos spot-notice: %w", err)
	}
	if err := wakeSpot(cfg, id, *in); err != nil {
		fmt.Fprintf(e.errOut, "wake-up not sent (%v); the worker acts at its next heartbeat\n", err)
	}
	fmt.Fprintf(e.out, "spot notice recorded for %s: its jobs checkpoint and go back to burst within %s, then it exits\n", id, *in)
	return nil
}

// wakeSpot sends the wake-up for a recorded spot notice.
func wakeSpot(cfg config.Config, id string, in time.Duration) error {
	nc, err := connectNATS(cfg, "ballast-chaos")
	if err != nil {
		return err
	}
	defer nc.Close()
	msg := workers.ControlMessage{Action: workers.ControlSpotNotice, NoticeSeconds: int(in.Seconds())}
	if err := workers.NotifyControl(nc, subjects(cfg), id, msg); err != nil {
		return err
	}
	return nc.FlushTimeout(2 * time.Second)
}
