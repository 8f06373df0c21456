package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers"
)

// runRecover rebuilds the jobs Redis lost from the event stream, or with
// --ack only acknowledges the loss record.
func runRecover(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "recover", "recover [--config FILE] [--ack] [-o json]")
	cfgPath := configFlag(fs)
	ack := fs.Bool("ack", false, "only acknowledge the recorded loss (Redis was reset on purpose, or the lost jobs were resubmitted by hand): rebuild nothing")
	out := outputFlag(fs)
	if err := parseArgs(fs, args, out, 0, "recover takes no arguments"); err != nil {
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
	if *ack {
		l, err := store.AckDataLoss(ctx)
		if err != nil {
			return err
		}
		if *out == "json" {
			return writeJSON(e.out, map[string]any{"acknowledged": l})
		}
		if l == nil {
			fmt.Fprintln(e.out, "no loss of Redis data is recorded")
			return nil
		}
		fmt.Fprintf(e.out, "acknowledged: %s\n", l.Message())
		return nil
	}
	nc, err := connectNATS(cfg, "ballast-recover")
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	// The rebuilt jobs are announced like any requeue; the elastic policy
	// decides whether burst work goes to loan, as a submission would.
	rep, err := controller.Recover(ctx, recoverOptions(cfg, store, js, eventbus.NewNATSPublisher(nc, subjects(cfg)), true, slog.Default()))
	if *out == "json" {
		if werr := writeJSON(e.out, rep); werr != nil {
			return werr
		}
		return err
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.out, "read %d job events: %d jobs accepted\n", rep.Events, rep.Accepted)
	fmt.Fprintf(e.out, "rebuilt:            %d (queued again; %d had started and run again: at least once)\n", rep.Rebuilt, rep.Rerun)
	fmt.Fprintf(e.out, "skipped, finished:  %d (ended before the loss: not run again)\n", rep.SkippedFinished)
	fmt.Fprintf(e.out, "already present:    %d\n", rep.AlreadyPresent)
	if rep.Resubmitted > 0 {
		fmt.Fprintf(e.out, "resubmitted:        %d (their idempotency key names a job submitted since)\n", rep.Resubmitted)
	}
	if rep.NoSpec > 0 {
		fmt.Fprintf(e.out, "NOT rebuilt:        %d (the stream holds no spec for them: resubmit them, then run ballast recover --ack)\n", rep.NoSpec)
		for _, id := range rep.NoSpecJobs {
			fmt.Fprintf(e.out, "  %s\n", id)
		}
	}
	switch {
	case rep.Cleared:
		fmt.Fprintln(e.out, "the loss record is cleared")
	case rep.NoSpec > 0:
		fmt.Fprintln(e.out, "the loss record stays until those jobs are resubmitted and acknowledged")
	}
	return nil
}

// recoverOptions binds controller.Recover to the config's store and
// stream. elastic says whether elastic capacity is managed (the router's
// choice for burst work whose events name no queue).
func recoverOptions(cfg config.Config, store *queues.Store, js jetstream.JetStream, pub events.Publisher, elastic bool, log *slog.Logger) controller.RecoverOptions {
	subj := subjects(cfg)
	return controller.RecoverOptions{Store: store, Router: routerFor(cfg, elastic), Events: pub, Logger: log,
		Settle: lossSettle(cfg),
		Replay: func(ctx context.Context, fn func(events.Event)) (int, error) {
			return eventbus.Replay(ctx, js, cfg.NATS.Stream, subj, fn)
		}}
}

// lossSettle is how long after a loss was noticed recovery waits before
// it reads the stream (controller.RecoverOptions.Settle): by then a worker
// that ran a lost job has beaten and stopped it (within its heartbeat) or
// self-fenced (within the worker TTL), and one that ended it while Redis
// was away has retried the record and published the end
// (workers.RecordRetryMax); a heartbeat more covers the publish.
func lossSettle(cfg config.Config) time.Duration {
	return max(cfg.Controller.WorkerTTL.Std(), workers.RecordRetryMax) + cfg.Worker.Heartbeat.Std()
}

// recoverAttrs are a recovery's counts as log attributes.
func recoverAttrs(r controller.RecoverReport) []any {
	return []any{"events", r.Events, "accepted", r.Accepted, "rebuilt", r.Rebuilt, "rerun", r.Rerun,
		"skipped_finished", r.SkippedFinished, "already_present", r.AlreadyPresent, "resubmitted", r.Resubmitted,
		"no_spec", r.NoSpec, "loss_record_cleared", r.Cleared}
}
