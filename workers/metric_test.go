package workers_test

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers"
)

func (e *env) metrics(id string) []float64 {
	e.t.Helper()
	m, err := e.store.Metrics(context.Background(), []string{id})
	if err != nil {
		e.t.Fatalf("Metrics %s: %v", id, err)
	}
	return m[id]
}

func TestProcessMetricsRecordedBeforeFinish(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start(e.options())
	// The last value is printed without a newline right before the exit: it
	// reaches the worker only when the output is flushed after the process
	// ended, which must still be before the job is recorded as succeeded.
	spec := e.shell(`
echo "epoch 1 starting"
echo '{"loss": 0.9, "step": 1}'
echo '{"accuracy": 0.5, "step": 1}'
echo '{"loss": "not a number"}'
echo 'loss: 0.01'
echo '{"loss": 0.5, "step": 2}' >&2
echo '{"loss": 0.25, "step": 2}'
echo '{"checkpoint": "e2"}'
echo "done"
printf '{"loss": 0.12, "step": 3}'
exit 0`)
	spec.Metric = "loss"
	j := e.submit(spec, queues.QueueCore)

	got := e.waitTerminal(j.ID, wait)
	if got.State != jobs.StateSucceeded {
		t.Fatalf("state %s error %q, want succeeded", got.State, got.LastError)
	}
	// Read at once: the controller reads the final metric as soon as it
	// sees the job succeeded, so there is no waiting here either.
	if m := e.metrics(j.ID); !reflect.DeepEqual(m, []float64{0.9, 0.25, 0.12}) {
		t.Fatalf("metrics %v, want exactly the 3 stdout values [0.9 0.25 0.12] in order", m)
	}
	if got.LastMetric == nil || *got.LastMetric != 0.12 {
		t.Fatalf("last metric %v, want 0.12", got.LastMetric)
	}
	if !hasLine(e.logs(j.ID), "stdout", `{"loss": 0.25, "step": 2}`) {
		t.Errorf("metric lines are output too and belong in the log")
	}
}

func TestProcessWithoutMetricRecordsNone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.start(e.options())
	// An empty key is "no metric", not a key to look for.
	j := e.submit(e.shell(`echo '{"loss": 0.9}'; echo '{"metric": 0.9}'; echo '{"": 0.9}'`), queues.QueueCore)
	got := e.waitTerminal(j.ID, wait)
	if got.State != jobs.StateSucceeded {
		t.Fatalf("state %s error %q, want succeeded", got.State, got.LastError)
	}
	if m := e.metrics(j.ID); m != nil || got.LastMetric != nil {
		t.Fatalf("metrics %v last %v for a job that names no metric, want none", m, got.LastMetric)
	}
}

func TestHandlerReportMetric(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	errs := make(chan [3]error, 1)
	o := e.options()
	o.Handlers = map[string]workers.Handler{
		"trial": func(ctx context.Context, r *workers.Run) error {
			errs <- [3]error{r.ReportMetric(0.75), r.ReportMetric(math.NaN()), (&workers.Run{}).ReportMetric(1)}
			return r.ReportMetric(0.5)
		},
	}
	e.start(o)
	spec := handlerSpec("trial")
	spec.Metric = "loss"
	j := e.submit(spec, queues.QueueCore)
	got := e.waitTerminal(j.ID, wait)
	if got.State != jobs.StateSucceeded {
		t.Fatalf("state %s error %q, want succeeded", got.State, got.LastError)
	}
	if m := e.metrics(j.ID); !reflect.DeepEqual(m, []float64{0.75, 0.5}) {
		t.Fatalf("metrics %v, want [0.75 0.5]", m)
	}
	if got.LastMetric == nil || *got.LastMetric != 0.5 {
		t.Fatalf("last metric %v, want 0.5", got.LastMetric)
	}
	es := <-errs
	if es[0] != nil {
		t.Errorf("ReportMetric(0.75): %v", es[0])
	}
	if es[1] == nil {
		t.Errorf("ReportMetric(NaN) did not fail")
	}
	if es[2] == nil {
		t.Errorf("ReportMetric outside a worker did not fail")
	}
}
