package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/ballastdev/ballast/queues"
)

func runCancel(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "cancel", "cancel [--config FILE] ID")
	cfgPath := configFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"give exactly one job ID"}
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	rdb, err := connectRedis(ctx, cfg)
	if err != nil {
		return err
	}
	defer rdb.Close()
	store := newStore(rdb, cfg)
	// The cancel is recorded either way; the wake-up only makes a running
	// job stop now rather than at its worker's next heartbeat.
	nc, err := connectNATS(cfg, "ballast-cancel")
	if err == nil {
		defer nc.Close()
		store = newWakingStore(rdb, cfg, nc)
	}
	res, err := store.Cancel(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	if nc != nil {
		// The wake-up or the announcement is published in the background:
		// make sure it leaves before exit.
		_ = nc.FlushTimeout(2 * time.Second)
	}
	switch res {
	case queues.Cancelled:
		fmt.Fprintf(e.out, "job %s cancelled before it started\n", fs.Arg(0))
	case queues.CancelRequested:
		fmt.Fprintf(e.out, "job %s is running: its worker was woken to send SIGTERM (at the latest within a heartbeat), then SIGKILL after the grace period\n", fs.Arg(0))
	default:
		fmt.Fprintf(e.out, "job %s had already finished; nothing changed\n", fs.Arg(0))
	}
	return nil
}
