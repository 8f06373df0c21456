package cli

import (
	"context"
	"fmt"

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
	store, closeFn, err := openStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer closeFn()
	res, err := store.Cancel(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	switch res {
	case queues.Cancelled:
		fmt.Fprintf(e.out, "job %s cancelled before it started\n", fs.Arg(0))
	case queues.CancelRequested:
		fmt.Fprintf(e.out, "job %s is running: its worker sends SIGTERM within a heartbeat, then SIGKILL after the grace period\n", fs.Arg(0))
	default:
		fmt.Fprintf(e.out, "job %s had already finished; nothing changed\n", fs.Arg(0))
	}
	return nil
}
