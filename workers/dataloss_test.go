package workers_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers"
)

// TestAnEndWhoseRecordVanishedIsPublished: Redis loses the namespace while
// a job runs, and the job ends before the worker's next beat could stop
// it. No record can take the end, so the worker publishes it, marked
// unrecorded: recovery reads the stream and must not run the job again.
// Before, the worker published nothing and recovery ran it a second time.
func TestAnEndWhoseRecordVanishedIsPublished(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := &recorder{}
	gate := make(chan struct{})
	o := e.options()
	o.Events = rec
	// No beat between the loss and the end: the end is what finds it.
	o.Heartbeat, o.WorkerTTL = time.Minute, 5*time.Minute
	o.Handlers = map[string]workers.Handler{"gated": func(ctx context.Context, _ *workers.Run) error {
		select {
		case <-gate:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
	w := e.start(o)
	j := e.submit(jobs.Spec{Handler: "gated", Class: jobs.ClassCore, Rhythm: jobs.RhythmPeriodic,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}, queues.QueueCore)
	e.waitFor(j.ID, wait, "running", func(j jobs.Job) bool { return j.State == jobs.StateRunning })

	ctx := context.Background()
	for _, p := range e.store.Namespace().KeyPatterns() {
		if err := queues.ScanKeys(ctx, e.rdb, p, func(keys []string) error { return e.rdb.Del(ctx, keys...).Err() }); err != nil {
			t.Fatal(err)
		}
	}
	close(gate)
	testenv.Eventually(t, wait, "the worker settled the job", func() bool { return w.Running() == 0 })

	got := rec.find(j.ID, events.TypeJobSucceeded)
	if len(got) != 1 || got[0].Attempt != 1 || got[0].State != jobs.StateSucceeded {
		t.Fatalf("job.succeeded events %+v, want one of attempt 1", got)
	}
	if why, _ := got[0].Data[events.DataUnrecorded].(string); why == "" {
		t.Errorf("the end event %+v is not marked unrecorded", got[0])
	}
	if _, err := e.store.Get(ctx, j.ID); err == nil {
		t.Errorf("the vanished record of %s was written again", j.ID)
	}
}

// TestAStopForAVanishedRecordSaysSo: the record of a running job vanishes
// while the worker knows of no loss (its look at the epoch failed as Redis
// came back, or no controller wrote one). The beat stops the job, and the
// worker says the record is gone, not that the attempt moved on, which
// sent operators looking for a requeue that never happened.
func TestAStopForAVanishedRecordSaysSo(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	logs := &testenv.LockedBuffer{}
	o := e.options()
	o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	o.Handlers = map[string]workers.Handler{"block": func(ctx context.Context, _ *workers.Run) error {
		<-ctx.Done()
		return ctx.Err()
	}}
	w := e.start(o)
	j := e.submit(jobs.Spec{Handler: "block", Class: jobs.ClassCore, Rhythm: jobs.RhythmPeriodic,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}, queues.QueueCore)
	e.waitFor(j.ID, wait, "running", func(j jobs.Job) bool { return j.State == jobs.StateRunning })
	testenv.DeleteNamespace(e.rdb, e.ns)
	testenv.Eventually(t, wait, "the worker stopped the job", func() bool { return w.Running() == 0 })
	out := logs.String()
	if !strings.Contains(out, "stopped a job: the job record is gone") || strings.Contains(out, "moved on") {
		t.Errorf("the worker's log does not say the record is gone:\n%s", out)
	}
}
