package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
	usagestore "github.com/ballastdev/ballast/queues/usage"
)

// historyTimeout bounds reading a job's events for `jobs show`: the
// reasons are worth a short wait, not a hung command.
const historyTimeout = 3 * time.Second

// jobAttempts puts j's attempt history together as the console's job page
// does (insight.BuildAttempts): the usage entries from Redis, the reasons
// from the event stream. Without the stream it still lists every attempt
// and says why the reasons are missing.
func jobAttempts(ctx context.Context, cfg config.Config, store *queues.Store, j jobs.Job) (insight.JobAttempts, error) {
	attempts, complete, err := usagestore.New(store).JobUsage(ctx, j)
	if err != nil {
		return insight.JobAttempts{}, err
	}
	note := "reasons from the event stream"
	evs, err := jobEvents(ctx, cfg, j.ID)
	if err != nil {
		note = "reasons unknown: " + err.Error()
	}
	if !complete {
		note += "; usage read stopped early, older attempts may lack their pool and worker"
	}
	prices := map[string]float64{}
	for _, p := range cfg.PolicyPools() {
		prices[p.Name] = p.PricePerSlotHour
	}
	a := insight.BuildAttempts(j, attempts, evs, prices, time.Now())
	a.Reasons = note
	return a, nil
}

func jobEvents(ctx context.Context, cfg config.Config, id string) ([]events.Event, error) {
	nc, err := connectNATS(cfg, "ballast-jobs-show")
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, historyTimeout)
	defer cancel()
	return eventbus.History(ctx, js, cfg.NATS.Stream, subjects(cfg), id)
}

// attemptRows are the lines of `jobs show`'s attempt table.
func attemptRows(a insight.JobAttempts) [][]any {
	rows := make([][]any, 0, len(a.Attempts))
	for _, at := range a.Attempts {
		where, ran, cost := "did not run", "-", "-"
		if at.Ran {
			where = dash(at.Pool) + " " + dash(at.Worker)
			ran = (time.Duration(at.Seconds*1000) * time.Millisecond).Round(100 * time.Millisecond).String()
			cost = fmt.Sprintf("%.4f", at.Cost)
		}
		why := dash(at.Reason)
		switch {
		case at.ExitCode != nil && at.Reason == "":
			why = fmt.Sprintf("exit %d", *at.ExitCode)
		case at.ExitCode != nil:
			why = fmt.Sprintf("%s (exit %d)", at.Reason, *at.ExitCode)
		}
		rows = append(rows, []any{at.Attempt, at.Began, dash(at.Queue), where, ran, cost, at.Outcome, why})
	}
	return rows
}
