package queues_test

import (
	"context"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// running submits a job and claims its first attempt for worker.
func running(t *testing.T, s *queues.Store, worker string) jobs.Job {
	t.Helper()
	ctx := context.Background()
	sub, err := s.Submit(ctx, spec(""), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	j, ok, err := s.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, worker)
	if err != nil || !ok {
		t.Fatalf("claim: ok=%v err=%v", ok, err)
	}
	return j
}

func report(t *testing.T, s *queues.Store, j jobs.Job, worker string, vals ...float64) {
	t.Helper()
	for _, v := range vals {
		ok, err := s.ReportMetric(context.Background(), j, worker, v)
		if err != nil || !ok {
			t.Fatalf("ReportMetric(%v): ok=%v err=%v", v, ok, err)
		}
	}
}

func TestReportMetricAppendsInOrderAndSetsLastMetric(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	j := running(t, s, "w1")
	if got, _ := s.Get(ctx, j.ID); got.LastMetric != nil {
		t.Fatalf("last metric %v before any report, want nil", *got.LastMetric)
	}
	// Values that a lossy format (%g, %.6f) would round: the series must
	// give back exactly what was reported.
	want := []float64{0.5, math.Pi, -3, 1e-9, 0.123456789012, 0.12}
	report(t, s, j, "w1", want...)

	m, err := s.Metrics(ctx, []string{j.ID})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m[j.ID], want) {
		t.Fatalf("series %v, want %v", m[j.ID], want)
	}
	got, err := s.Get(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.LastMetric == nil || *got.LastMetric != 0.12 {
		t.Fatalf("last metric %v, want 0.12", got.LastMetric)
	}
	// The controller reads jobs through ActiveJobs, which reads a fixed set
	// of fields: the last metric must be one of them.
	act, err := s.ActiveJobs(ctx)
	if err != nil || len(act) != 1 || act[0].LastMetric == nil || *act[0].LastMetric != 0.12 {
		t.Fatalf("ActiveJobs: %+v %v, want the last metric 0.12", act, err)
	}
}

func TestReportMetricIsFenced(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	j := running(t, s, "w1")
	report(t, s, j, "w1", 1)

	refused := func(what string, j jobs.Job, worker string) {
		t.Helper()
		ok, err := s.ReportMetric(ctx, j, worker, 99)
		if err != nil || ok {
			t.Fatalf("%s: ok=%v err=%v, want refused", what, ok, err)
		}
	}
	refused("wrong worker", j, "w2")
	stale := j
	stale.Attempt = 2
	refused("other attempt", stale, "w1")
	// Requeued: the old attempt's worker may still print a line or two.
	if r, err := s.Requeue(ctx, j, "w1", queues.Requeue{Reason: "drain"}); err != nil || r.Attempt != 2 {
		t.Fatalf("requeue: %+v %v", r, err)
	}
	refused("requeued attempt", j, "w1")
	// Queued, not running: even the current attempt has no one to report.
	refused("queued attempt", stale, "w1")
	refused("unknown job", jobs.Job{ID: "nope", Attempt: 1}, "w1")
	// Ended: same attempt, same worker, but a late line after the finish
	// must not change the result the controller has already read.
	done := running(t, s, "w1")
	code := 0
	if ok, err := s.Finish(ctx, done, "w1", jobs.StateSucceeded, &code, ""); err != nil || !ok {
		t.Fatalf("finish: ok=%v err=%v", ok, err)
	}
	refused("finished attempt", done, "w1")

	m, err := s.Metrics(ctx, []string{j.ID, "nope", done.ID})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m, map[string][]float64{j.ID: {1}}) {
		t.Fatalf("metrics %v after refused reports, want only the accepted value", m)
	}
	if got, _ := s.Get(ctx, j.ID); got.LastMetric == nil || *got.LastMetric != 1 {
		t.Fatalf("last metric %v after refused reports, want 1", got.LastMetric)
	}
	if n, _ := s.Redis().Exists(ctx, s.Namespace().JobMetrics("nope")).Result(); n != 0 {
		t.Fatalf("a refused report created the series of a job without a record")
	}
}

func TestReportMetricRefusesNonFiniteValues(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	j := running(t, s, "w1")
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if ok, err := s.ReportMetric(ctx, j, "w1", v); err == nil || ok {
			t.Errorf("ReportMetric(%v): ok=%v err=%v, want an error", v, ok, err)
		}
	}
	if m, _ := s.Metrics(ctx, []string{j.ID}); len(m) != 0 {
		t.Fatalf("metrics %v, want none", m)
	}
}

func TestMetricsOfSeveralJobsInOneCall(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	a, b, silent := running(t, s, "w1"), running(t, s, "w1"), running(t, s, "w2")
	report(t, s, a, "w1", 1, 2, 3)
	report(t, s, b, "w1", 0.25)

	m, err := s.Metrics(ctx, []string{a.ID, silent.ID, b.ID, "never-existed"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float64{a.ID: {1, 2, 3}, b.ID: {0.25}}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("metrics %v, want %v (jobs without values absent)", m, want)
	}
	if m, err := s.Metrics(ctx, nil); err != nil || m == nil || len(m) != 0 {
		t.Fatalf("Metrics(nil) = %v, %v; want an empty map", m, err)
	}
}

func TestMetricsKeepOnlyTheLastValues(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	j := running(t, s, "w1")
	// Filling the list through ReportMetric would take 10000 round trips;
	// the script only appends and trims, so a prefilled list tests the trim.
	key := s.Namespace().JobMetrics(j.ID)
	fill := make([]any, queues.MaxMetricsPerJob)
	for i := range fill {
		fill[i] = i
	}
	if err := s.Redis().RPush(ctx, key, fill...).Err(); err != nil {
		t.Fatal(err)
	}
	report(t, s, j, "w1", -1)
	m, err := s.Metrics(ctx, []string{j.ID})
	if err != nil {
		t.Fatal(err)
	}
	got := m[j.ID]
	if len(got) != queues.MaxMetricsPerJob || got[0] != 1 || got[len(got)-1] != -1 {
		t.Fatalf("%d values from %v to %v, want %d from 1 (the oldest dropped) to -1",
			len(got), got[0], got[len(got)-1], queues.MaxMetricsPerJob)
	}
}

func TestMetricsExpireWithTheRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ttl := func(t *testing.T, s *queues.Store, id string) (series, record time.Duration) {
		t.Helper()
		series, err := s.Redis().PTTL(ctx, s.Namespace().JobMetrics(id)).Result()
		if err != nil {
			t.Fatal(err)
		}
		record, err = s.Redis().PTTL(ctx, s.Namespace().Job(id)).Result()
		if err != nil {
			t.Fatal(err)
		}
		return series, record
	}
	t.Run("finish", func(t *testing.T) {
		t.Parallel()
		s, _ := newStore(t)
		j := running(t, s, "w1")
		report(t, s, j, "w1", 0.5)
		if series, _ := ttl(t, s, j.ID); series != -1 {
			t.Fatalf("series TTL %v while running, want none (-1)", series)
		}
		code := 0
		if ok, err := s.Finish(ctx, j, "w1", jobs.StateSucceeded, &code, ""); err != nil || !ok {
			t.Fatalf("finish: ok=%v err=%v", ok, err)
		}
		series, record := ttl(t, s, j.ID)
		if series <= 0 || series > queues.DefaultRetention || record <= 0 || series > record+time.Second {
			t.Fatalf("series TTL %v, record TTL %v: want the series to expire with the record", series, record)
		}
		// Kept until then: the controller reads it after the job ended.
		if m, _ := s.Metrics(ctx, []string{j.ID}); len(m[j.ID]) != 1 {
			t.Fatalf("metrics %v after finish, want the value kept", m)
		}
	})
	t.Run("cancel while queued", func(t *testing.T) {
		t.Parallel()
		s, _ := newStore(t)
		j := running(t, s, "w1")
		report(t, s, j, "w1", 0.5)
		// An earlier attempt reported, then the job went back to the queue
		// and was cancelled there: the series is still the record's.
		if r, err := s.Requeue(ctx, j, "w1", queues.Requeue{Reason: "drain"}); err != nil || r.Attempt != 2 {
			t.Fatalf("requeue: %+v %v", r, err)
		}
		if res, err := s.Cancel(ctx, j.ID); err != nil || res != queues.Cancelled {
			t.Fatalf("cancel: %v %v", res, err)
		}
		series, record := ttl(t, s, j.ID)
		if series <= 0 || record <= 0 || series > record+time.Second {
			t.Fatalf("series TTL %v, record TTL %v: want the series to expire with the record", series, record)
		}
	})
}
