package telemetry

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ballastdev/ballast/orchestrator/model/events"
)

// newTest builds a Metrics that never pushes OTLP, whatever the test
// process' environment says, and shuts it down with the test.
func newTest(t *testing.T, o Options) *Metrics {
	t.Helper()
	o.DisableOTLP = true
	m, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	return m
}

// scrape GETs Handler() like Prometheus would and parses the text format.
func scrape(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: status %d: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("scrape: Content-Type %q, want the text format", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("scrape: parse: %v", err)
	}
	return fams
}

// series returns the sample of family name whose labels are exactly want,
// or nil.
func series(fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(want) {
			continue
		}
		match := true
		for _, l := range m.GetLabel() {
			if v, ok := want[l.GetName()]; !ok || v != l.GetValue() {
				match = false
				break
			}
		}
		if match {
			return m
		}
	}
	return nil
}

// value reads a counter or gauge sample, failing when it is missing.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	m := series(fams, name, labels)
	if m == nil {
		t.Fatalf("%s%v: no such series", name, labels)
	}
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	}
	t.Fatalf("%s%v: neither counter nor gauge", name, labels)
	return 0
}

func wantValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string, want float64) {
	t.Helper()
	// Written so that NaN fails: NaN compares false with everything.
	if got := value(t, fams, name, labels); !(math.Abs(got-want) <= 1e-9) {
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}

func wantType(t *testing.T, fams map[string]*dto.MetricFamily, name string, typ dto.MetricType) {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("family %s missing; have %v", name, familyNames(fams))
	}
	if f.GetType() != typ {
		t.Errorf("%s: type %v, want %v", name, f.GetType(), typ)
	}
}

func familyNames(fams map[string]*dto.MetricFamily) []string {
	var out []string
	for n := range fams {
		out = append(out, n)
	}
	return out
}

// histogram checks count, sum and the cumulative counts of the given
// upper bounds for one class/pool series of ballast_job_wait_seconds.
func wantHistogram(t *testing.T, fams map[string]*dto.MetricFamily, class, pool string, count uint64, sum float64, buckets map[float64]uint64) {
	t.Helper()
	m := series(fams, "ballast_job_wait_seconds", map[string]string{"class": class, "pool": pool})
	if m == nil || m.Histogram == nil {
		t.Fatalf("ballast_job_wait_seconds{class=%q,pool=%q}: missing", class, pool)
	}
	h := m.GetHistogram()
	if h.GetSampleCount() != count {
		t.Errorf("%s/%s: count %d, want %d", class, pool, h.GetSampleCount(), count)
	}
	if !(math.Abs(h.GetSampleSum()-sum) <= 1e-9) {
		t.Errorf("%s/%s: sum %v, want %v", class, pool, h.GetSampleSum(), sum)
	}
	got := map[float64]uint64{}
	for _, b := range h.GetBucket() {
		got[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	for le, want := range buckets {
		c, ok := got[le]
		if !ok {
			t.Errorf("%s/%s: no bucket le=%v", class, pool, le)
			continue
		}
		if c != want {
			t.Errorf("%s/%s: bucket le=%v = %d, want %d", class, pool, le, c, want)
		}
	}
}

func TestScrapeReportsRecordedValues(t *testing.T) {
	m := newTest(t, Options{})

	m.JobStarted(ClassCore, "onprem", 5*time.Millisecond)
	m.JobStarted(ClassCore, "onprem", 40*time.Millisecond)
	m.JobStarted(ClassCore, "onprem", 3*time.Second)
	m.JobStarted(ClassBurst, "spot-a", 90*time.Second)
	m.JobStarted(ClassBurst, "spot-a", 2*time.Hour) // on the last bound: le is inclusive
	m.JobStarted(ClassBurst, "spot-a", 3*time.Hour) // past the last bound: +Inf only
	m.JobStarted(ClassCore, "spot-a", -time.Second) // clock skew counts as no wait

	for range 3 {
		m.JobFinished(ClassCore, OutcomeSucceeded)
	}
	m.JobFinished(ClassCore, OutcomeFailed)
	m.JobFinished(ClassBurst, OutcomeCancelled)
	m.JobFinished(ClassBurst, OutcomeCancelled)

	m.Preempted(ReasonReclaim)
	m.Preempted(ReasonReclaim)
	m.Preempted(ReasonWorkerLost)
	m.Preempted(ReasonSpot)
	m.Observe(events.Overflow{JobID: "j1", Attempt: 2, Pool: "od", Time: time.Now()}.Event())
	m.Overflowed("od")

	m.SetSnapshot(Snapshot{
		At: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC),
		Queues: []QueueDepth{
			{Queue: "core", Pending: 4, OldestSeconds: 12.5},
			{Queue: "burst", Pending: 0, OldestSeconds: 0},
		},
		Pools: []PoolSlots{
			{Pool: "onprem", Kind: "fixed", Busy: 6, Idle: 2, Workers: map[string]int{WorkerUp: 2, WorkerDraining: 1}},
			{Pool: "spot-a", Kind: "elastic", Busy: 3, Idle: 1, Workers: map[string]int{WorkerStarting: 2, WorkerUp: 1}},
		},
		FixedIdleRatio:    0.25,
		CostPerHourByPool: map[string]float64{"onprem": 4.5, "spot-a": 1.2},
		CostTodayByPool:   map[string]float64{"onprem": 108, "spot-a": 9.5},
		CostTodayByTeam:   map[string]float64{"ml": 321.75, "etl": 10},
	})

	fams := scrape(t, m)

	wantType(t, fams, "ballast_job_wait_seconds", dto.MetricType_HISTOGRAM)
	wantHistogram(t, fams, ClassCore, "onprem", 3, 0.005+0.04+3,
		map[float64]uint64{0.01: 1, 0.05: 2, 2.5: 2, 5: 3, math.Inf(1): 3})
	wantHistogram(t, fams, ClassBurst, "spot-a", 3, 90+7200+10800,
		map[float64]uint64{60: 0, 120: 1, 3600: 1, 7200: 2, math.Inf(1): 3})
	wantHistogram(t, fams, ClassCore, "spot-a", 1, 0,
		map[float64]uint64{0.01: 1})
	if got := len(fams["ballast_job_wait_seconds"].GetMetric()); got != 3 {
		t.Errorf("ballast_job_wait_seconds: %d series, want 3", got)
	}
	// The buckets are exactly WaitBuckets plus +Inf, 10 ms to 2 h.
	h := series(fams, "ballast_job_wait_seconds", map[string]string{"class": ClassCore, "pool": "onprem"}).GetHistogram()
	var les []float64
	for _, b := range h.GetBucket() {
		les = append(les, b.GetUpperBound())
	}
	if want := append(append([]float64(nil), WaitBuckets...), math.Inf(1)); !equalFloats(les, want) {
		t.Errorf("bucket bounds %v, want %v", les, want)
	}

	wantType(t, fams, "ballast_jobs_finished_total", dto.MetricType_COUNTER)
	wantValue(t, fams, "ballast_jobs_finished_total", map[string]string{"class": "core", "outcome": "succeeded"}, 3)
	wantValue(t, fams, "ballast_jobs_finished_total", map[string]string{"class": "core", "outcome": "failed"}, 1)
	wantValue(t, fams, "ballast_jobs_finished_total", map[string]string{"class": "burst", "outcome": "cancelled"}, 2)
	if m := series(fams, "ballast_jobs_finished_total", map[string]string{"class": "burst", "outcome": "succeeded"}); m != nil {
		t.Errorf("unrecorded burst/succeeded series present: %v", m)
	}

	wantType(t, fams, "ballast_preemptions_total", dto.MetricType_COUNTER)
	wantValue(t, fams, "ballast_preemptions_total", map[string]string{"reason": "reclaim"}, 2)
	wantValue(t, fams, "ballast_preemptions_total", map[string]string{"reason": "worker_lost"}, 1)
	wantValue(t, fams, "ballast_preemptions_total", map[string]string{"reason": "spot"}, 1)
	if got := len(fams["ballast_preemptions_total"].GetMetric()); got != 3 {
		t.Errorf("ballast_preemptions_total: %d series, want 3", got)
	}

	wantType(t, fams, "ballast_overflows_total", dto.MetricType_COUNTER)
	wantValue(t, fams, "ballast_overflows_total", map[string]string{"pool": "od"}, 2)

	wantType(t, fams, "ballast_queue_depth", dto.MetricType_GAUGE)
	wantValue(t, fams, "ballast_queue_depth", map[string]string{"queue": "core"}, 4)
	wantValue(t, fams, "ballast_queue_depth", map[string]string{"queue": "burst"}, 0)
	wantType(t, fams, "ballast_queue_oldest_age_seconds", dto.MetricType_GAUGE)
	wantValue(t, fams, "ballast_queue_oldest_age_seconds", map[string]string{"queue": "core"}, 12.5)
	wantValue(t, fams, "ballast_queue_oldest_age_seconds", map[string]string{"queue": "burst"}, 0)

	wantType(t, fams, "ballast_slots", dto.MetricType_GAUGE)
	wantValue(t, fams, "ballast_slots", map[string]string{"pool": "onprem", "kind": "fixed", "state": "busy"}, 6)
	wantValue(t, fams, "ballast_slots", map[string]string{"pool": "onprem", "kind": "fixed", "state": "idle"}, 2)
	wantValue(t, fams, "ballast_slots", map[string]string{"pool": "spot-a", "kind": "elastic", "state": "busy"}, 3)
	wantValue(t, fams, "ballast_slots", map[string]string{"pool": "spot-a", "kind": "elastic", "state": "idle"}, 1)

	wantType(t, fams, "ballast_workers", dto.MetricType_GAUGE)
	wantValue(t, fams, "ballast_workers", map[string]string{"pool": "onprem", "state": "up"}, 2)
	wantValue(t, fams, "ballast_workers", map[string]string{"pool": "onprem", "state": "draining"}, 1)
	wantValue(t, fams, "ballast_workers", map[string]string{"pool": "spot-a", "state": "starting"}, 2)
	wantValue(t, fams, "ballast_workers", map[string]string{"pool": "spot-a", "state": "up"}, 1)
	if got := len(fams["ballast_workers"].GetMetric()); got != 4 {
		t.Errorf("ballast_workers: %d series, want 4 (no invented zero states)", got)
	}

	wantType(t, fams, "ballast_fixed_idle_ratio", dto.MetricType_GAUGE)
	wantValue(t, fams, "ballast_fixed_idle_ratio", nil, 0.25)
	wantType(t, fams, "ballast_fixed_idle_ratio_hour", dto.MetricType_GAUGE)
	wantValue(t, fams, "ballast_fixed_idle_ratio_hour", nil, 0.25)

	wantType(t, fams, "ballast_cost_rate_per_hour", dto.MetricType_GAUGE)
	wantValue(t, fams, "ballast_cost_rate_per_hour", map[string]string{"pool": "onprem"}, 4.5)
	wantValue(t, fams, "ballast_cost_rate_per_hour", map[string]string{"pool": "spot-a"}, 1.2)
	wantType(t, fams, "ballast_cost_team_today", dto.MetricType_GAUGE)
	wantValue(t, fams, "ballast_cost_team_today", map[string]string{"team": "ml"}, 321.75)
	wantValue(t, fams, "ballast_cost_team_today", map[string]string{"team": "etl"}, 10)
	wantType(t, fams, "ballast_cost_pool_today", dto.MetricType_GAUGE)
	wantValue(t, fams, "ballast_cost_pool_today", map[string]string{"pool": "onprem"}, 108)
	wantValue(t, fams, "ballast_cost_pool_today", map[string]string{"pool": "spot-a"}, 9.5)

	// Nothing beyond the documented families: no target_info, no
	// otel_scope_info, no Go runtime collectors from a global registry.
	want := map[string]bool{
		"ballast_job_wait_seconds": true, "ballast_jobs_finished_total": true, "ballast_preemptions_total": true,
		"ballast_overflows_total": true, "ballast_queue_depth": true, "ballast_queue_oldest_age_seconds": true, "ballast_slots": true,
		"ballast_workers": true, "ballast_fixed_idle_ratio": true, "ballast_fixed_idle_ratio_hour": true,
		"ballast_cost_rate_per_hour": true, "ballast_cost_team_today": true, "ballast_cost_pool_today": true,
	}
	for name := range fams {
		if !want[name] {
			t.Errorf("unexpected family %s", name)
		}
	}
	for name := range want {
		if fams[name] == nil {
			t.Errorf("missing family %s", name)
		}
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCostTodayFollowsLedgerNotIncrements(t *testing.T) {
	m := newTest(t, Options{})
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	m.SetSnapshot(Snapshot{At: at, CostTodayByTeam: map[string]float64{"ml": 100}})
	m.SetSnapshot(Snapshot{At: at.Add(time.Second), CostTodayByTeam: map[string]float64{"ml": 90}}) // a ledger correction
	wantValue(t, scrape(t, m), "ballast_cost_team_today", map[string]string{"team": "ml"}, 90)
}

func TestNoGaugesBeforeFirstSnapshot(t *testing.T) {
	m := newTest(t, Options{})
	m.JobFinished(ClassCore, OutcomeSucceeded)
	fams := scrape(t, m)
	for _, name := range []string{
		"ballast_queue_depth", "ballast_slots", "ballast_workers",
		"ballast_fixed_idle_ratio", "ballast_fixed_idle_ratio_hour", "ballast_cost_team_today", "ballast_cost_pool_today",
	} {
		if fams[name] != nil {
			t.Errorf("%s reported before any snapshot: %v", name, fams[name])
		}
	}
	wantValue(t, fams, "ballast_jobs_finished_total", map[string]string{"class": "core", "outcome": "succeeded"}, 1)
}

func TestSnapshotReplacesSeriesAndIsCopied(t *testing.T) {
	m := newTest(t, Options{})
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

	workers := map[string]int{WorkerUp: 3}
	queues := []QueueDepth{{Queue: "q1", Pending: 7}}
	costs := map[string]float64{"old": 2}
	m.SetSnapshot(Snapshot{
		At: at, Queues: queues, CostPerHourByPool: costs,
		Pools: []PoolSlots{{Pool: "old", Kind: "elastic", Busy: 1, Workers: workers}},
	})
	// The controller reuses its buffers between ticks; that must not leak
	// into what the last snapshot reports.
	workers[WorkerUp] = 99
	queues[0].Pending = 99
	costs["old"] = 99
	fams := scrape(t, m)
	wantValue(t, fams, "ballast_workers", map[string]string{"pool": "old", "state": "up"}, 3)
	wantValue(t, fams, "ballast_queue_depth", map[string]string{"queue": "q1"}, 7)
	wantValue(t, fams, "ballast_cost_rate_per_hour", map[string]string{"pool": "old"}, 2)

	m.SetSnapshot(Snapshot{
		At:    at.Add(time.Second),
		Pools: []PoolSlots{{Pool: "new", Kind: "fixed", Idle: 4, Workers: map[string]int{WorkerUp: 1}}},
	})
	fams = scrape(t, m)
	wantValue(t, fams, "ballast_slots", map[string]string{"pool": "new", "kind": "fixed", "state": "idle"}, 4)
	if s := series(fams, "ballast_workers", map[string]string{"pool": "old", "state": "up"}); s != nil {
		t.Errorf("series of a pool gone from the snapshot still reported: %v", s)
	}
	if f := fams["ballast_queue_depth"]; f != nil {
		t.Errorf("queue gone from the snapshot still reported: %v", f)
	}
	if f := fams["ballast_cost_rate_per_hour"]; f != nil {
		t.Errorf("cost of a pool gone from the snapshot still reported: %v", f)
	}
}

func TestIdleRatioHourIsRollingMean(t *testing.T) {
	m := newTest(t, Options{})
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tick := func(after time.Duration, ratio float64) {
		m.SetSnapshot(Snapshot{At: t0.Add(after), FixedIdleRatio: ratio})
	}

	tick(0, 1.0)
	tick(10*time.Minute, 0.8)
	tick(30*time.Minute, 0.6)
	fams := scrape(t, m)
	wantValue(t, fams, "ballast_fixed_idle_ratio_hour", nil, (1.0+0.8+0.6)/3)
	wantValue(t, fams, "ballast_fixed_idle_ratio", nil, 0.6)

	tick(61*time.Minute, 0.2) // the t0 sample is now over an hour old
	wantValue(t, scrape(t, m), "ballast_fixed_idle_ratio_hour", nil, (0.8+0.6+0.2)/3)

	tick(70*time.Minute, 0.1) // the 10m sample is now exactly an hour old: out
	fams = scrape(t, m)
	wantValue(t, fams, "ballast_fixed_idle_ratio_hour", nil, (0.6+0.2+0.1)/3)
	wantValue(t, fams, "ballast_fixed_idle_ratio", nil, 0.1)

	// A tick without fixed capacity has no ratio: it must neither show as
	// the current value nor drag the hour's mean.
	tick(71*time.Minute, math.NaN())
	fams = scrape(t, m)
	if f := fams["ballast_fixed_idle_ratio"]; f != nil {
		t.Errorf("NaN ratio reported: %v", f)
	}
	wantValue(t, fams, "ballast_fixed_idle_ratio_hour", nil, (0.6+0.2+0.1)/3)

	// Two hours of silence, then one tick: only that tick is in the hour.
	tick(200*time.Minute, 0.5)
	wantValue(t, scrape(t, m), "ballast_fixed_idle_ratio_hour", nil, 0.5)
}

func TestIdleWindowOutOfOrderSamples(t *testing.T) {
	var w idleWindow
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	w.add(t0.Add(2*time.Hour), 0.4)
	w.add(t0.Add(90*time.Minute), 0.2)        // late, but within the hour: kept
	w.add(t0.Add(30*time.Minute), 0.9)        // late and over an hour old: dropped
	w.add(t0.Add(2*time.Hour+time.Second), 0) // newest
	got, ok := w.mean()
	if !ok || !(math.Abs(got-(0.4+0.2+0)/3) <= 1e-12) {
		t.Fatalf("mean = %v, %v; want %v", got, ok, (0.4+0.2+0)/3)
	}
	for i := 1; i < len(w.samples); i++ {
		if w.samples[i].at.Before(w.samples[i-1].at) {
			t.Fatalf("samples out of order at %d: %v", i, w.samples)
		}
	}
	var empty idleWindow
	if _, ok := empty.mean(); ok {
		t.Fatal("empty window reported a mean")
	}
}

func TestInstancesDoNotShareValues(t *testing.T) {
	a := newTest(t, Options{})
	b := newTest(t, Options{})
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

	a.JobFinished(ClassCore, OutcomeSucceeded)
	a.JobFinished(ClassCore, OutcomeSucceeded)
	a.Preempted(ReasonDrain)
	a.JobStarted(ClassCore, "p", time.Second)
	a.SetSnapshot(Snapshot{At: at, Queues: []QueueDepth{{Queue: "q", Pending: 5}}, FixedIdleRatio: 0.9})

	b.JobFinished(ClassCore, OutcomeSucceeded)
	b.SetSnapshot(Snapshot{At: at, Queues: []QueueDepth{{Queue: "q", Pending: 1}}, FixedIdleRatio: 0.1})

	fa, fb := scrape(t, a), scrape(t, b)
	wantValue(t, fa, "ballast_jobs_finished_total", map[string]string{"class": "core", "outcome": "succeeded"}, 2)
	wantValue(t, fb, "ballast_jobs_finished_total", map[string]string{"class": "core", "outcome": "succeeded"}, 1)
	wantValue(t, fa, "ballast_queue_depth", map[string]string{"queue": "q"}, 5)
	wantValue(t, fb, "ballast_queue_depth", map[string]string{"queue": "q"}, 1)
	wantValue(t, fa, "ballast_fixed_idle_ratio_hour", nil, 0.9)
	wantValue(t, fb, "ballast_fixed_idle_ratio_hour", nil, 0.1)
	for _, name := range []string{"ballast_preemptions_total", "ballast_job_wait_seconds"} {
		if fb[name] != nil {
			t.Errorf("%s recorded on a shows up on b: %v", name, fb[name])
		}
	}
}

func TestNamespace(t *testing.T) {
	m := newTest(t, Options{Namespace: "ci"})
	m.JobStarted(ClassBurst, "p", time.Minute)
	m.Preempted(ReasonMigrate)
	m.SetSnapshot(Snapshot{At: time.Unix(1, 0), FixedIdleRatio: 0.5})
	fams := scrape(t, m)
	h := series(fams, "ci_job_wait_seconds", map[string]string{"class": "burst", "pool": "p"})
	if h == nil || h.GetHistogram().GetSampleCount() != 1 {
		t.Errorf("ci_job_wait_seconds missing or wrong: %v (families %v)", h, familyNames(fams))
	}
	wantValue(t, fams, "ci_preemptions_total", map[string]string{"reason": "migrate"}, 1)
	wantValue(t, fams, "ci_fixed_idle_ratio_hour", nil, 0.5)
	for name := range fams {
		if strings.HasPrefix(name, "ballast_") {
			t.Errorf("default namespace leaked: %s", name)
		}
	}

	if _, err := New(Options{Namespace: "9lives", DisableOTLP: true}); err == nil {
		t.Error("New accepted a namespace that makes invalid instrument names")
	}
}

func TestNilMetricsIsNoop(t *testing.T) {
	var m *Metrics
	m.JobStarted(ClassCore, "p", time.Second)
	m.JobFinished(ClassCore, OutcomeFailed)
	m.Preempted(ReasonSpot)
	m.RedisDurability(false, "unknown")
	m.SetSnapshot(Snapshot{FixedIdleRatio: 1})
	if err := m.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Fatalf("nil Handler status %d, want 404", rec.Code)
	}
}

func TestShutdownIsIdempotent(t *testing.T) {
	m := newTest(t, Options{})
	m.JobFinished(ClassCore, OutcomeSucceeded)
	if err := m.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := m.Shutdown(context.Background()); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	m.JobFinished(ClassCore, OutcomeSucceeded) // recording after Shutdown must not panic
}

// TestConcurrentUse is meant for -race: the controller records from its
// loop and job handlers while Prometheus scrapes.
func TestConcurrentUse(t *testing.T) {
	m := newTest(t, Options{})
	const workers, each = 8, 200
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			pool := "p" + strconv.Itoa(w%2)
			for i := range each {
				m.JobStarted(ClassCore, pool, time.Duration(i)*time.Millisecond)
				m.JobFinished(ClassCore, OutcomeSucceeded)
				m.SetSnapshot(Snapshot{
					At:     at.Add(time.Duration(w*each+i) * time.Second),
					Pools:  []PoolSlots{{Pool: pool, Kind: "fixed", Busy: i, Workers: map[string]int{WorkerUp: 1}}},
					Queues: []QueueDepth{{Queue: "q", Pending: i}},
				})
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			rec := httptest.NewRecorder()
			m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		}
	})
	wg.Wait()
	fams := scrape(t, m)
	wantValue(t, fams, "ballast_jobs_finished_total", map[string]string{"class": "core", "outcome": "succeeded"}, workers*each)
	var n uint64
	for _, p := range []string{"p0", "p1"} {
		n += series(fams, "ballast_job_wait_seconds", map[string]string{"class": "core", "pool": p}).GetHistogram().GetSampleCount()
	}
	if n != workers*each {
		t.Errorf("histogram count %d, want %d", n, workers*each)
	}
}

// TestRedisDurabilityGauge: the verdict on Redis exports as
// ballast_redis_durable, 0 or 1 with the reason as a label.
func TestRedisDurabilityGauge(t *testing.T) {
	m, err := New(Options{DisableOTLP: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	m.RedisDurability(false, "no_persistence")
	fams := scrape(t, m)
	wantType(t, fams, "ballast_redis_durable", dto.MetricType_GAUGE)
	wantValue(t, fams, "ballast_redis_durable", map[string]string{"reason": "no_persistence"}, 0)
	m.RedisDurability(true, "ok")
	wantValue(t, scrape(t, m), "ballast_redis_durable", map[string]string{"reason": "ok"}, 1)
}

// TestRedisDataLostGauge: a recorded loss of Redis data exports as
// ballast_redis_data_lost 1 with when it was noticed, and clears to 0.
func TestRedisDataLostGauge(t *testing.T) {
	m, err := New(Options{DisableOTLP: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	at := time.Unix(1_800_000_000, 0)
	m.RedisDataLost(true, at)
	fams := scrape(t, m)
	wantType(t, fams, "ballast_redis_data_lost", dto.MetricType_GAUGE)
	wantValue(t, fams, "ballast_redis_data_lost", map[string]string{}, 1)
	wantValue(t, fams, "ballast_redis_data_lost_at_seconds", map[string]string{}, float64(at.Unix()))
	m.RedisDataLost(false, time.Time{})
	fams = scrape(t, m)
	wantValue(t, fams, "ballast_redis_data_lost", map[string]string{}, 0)
	wantValue(t, fams, "ballast_redis_data_lost_at_seconds", map[string]string{}, 0)
}
