package cli

import (
	"context"
	"fmt"

	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// runRetry submits a new job from a finished job's spec: same template,
// parameters, team, labels, class and timeout, under a fresh idempotency
// key (the old key would only return the old job). A job that has not
// finished is refused: a second copy of it would run beside it.
func runRetry(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "retry", "retry [--config FILE] [--wait] ID")
	cfgPath := configFlag(fs)
	wait := fs.Bool("wait", false, "follow the new job until it ends, as submit --wait does")
	out := outputFlag(fs)
	if err := parseArgs(fs, args, out, 1, "give exactly one job ID: ballast retry ID"); err != nil {
		return err
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
	old, err := store.Get(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	if !old.State.Terminal() {
		return fmt.Errorf("job %s is still %s: only a finished job can be retried (cancel it first with ballast cancel %s, or wait for it)",
			old.ID, old.State, old.ID)
	}
	sub, err := jobs.Resubmission(old)
	if err != nil {
		return err
	}
	nc, err := connectNATS(cfg, "ballast-retry")
	if err != nil {
		return err
	}
	defer nc.Close()
	receipt, err := client.NewNATS(nc, subjects(cfg)).Submit(ctx, sub)
	if err != nil {
		return explain(err)
	}
	if *out == "table" {
		fmt.Fprintf(e.out, "retry of %s (%s): ", old.ID, old.State)
	}
	if err := printReceipt(e, *out, receipt); err != nil || !*wait {
		return err
	}
	return waitResult(ctx, e, cfg, receipt.JobID, followJob(ctx, e, cfg, nc, receipt.JobID, *out))
}
