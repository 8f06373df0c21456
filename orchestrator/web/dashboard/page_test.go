package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/internal/tools/browser"
	"github.com/ballastdev/ballast/orchestrator/analysis/advisor"
	"github.com/ballastdev/ballast/orchestrator/model/shares"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
)

// These tests run the page in headless Chromium against a stand-in API
// that serves hand-made overviews, so they check what the script draws
// (every section, absent values, the fallback to polling, the stale mark)
// without a controller. The e2e test checks it against a real one.

// shared is the one Chromium of this test binary: starting it is the slow
// part on a loaded machine, so every test opens a tab of its own in it.
var shared struct {
	once sync.Once
	b    *browser.Browser
	err  error
}

// TestMain closes the shared browser after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if shared.b != nil {
		_ = shared.b.Close()
	}
	os.Exit(code)
}

// startBrowser gives t a tab of the shared Chromium; without one the test
// fails under CI and is skipped elsewhere.
func startBrowser(t *testing.T) *browser.Browser {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	shared.once.Do(func() { shared.b, shared.err = browser.Start(context.Background(), browser.Options{}) })
	if errors.Is(shared.err, browser.ErrNotFound) {
		testenv.Unavailable(t, "Chromium", shared.err)
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	b, err := shared.b.NewTab()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func ptr(v float64) *float64 { return &v }

// defaultSpan is the span the API serves when none is asked for.
var defaultSpan = func() insight.Span {
	for _, sp := range insight.Spans {
		if sp.Window == insight.DefaultSeriesWindow && sp.Step == insight.DefaultSeriesStep {
			return sp
		}
	}
	panic("no default among insight.Spans")
}()

// series is a key-measures series over sp ending at at, bucketed as the
// API does (the bucket holding at-window to the one holding at, one more
// than window/step), with an idle sample missing in every 7th bucket.
func series(at time.Time, sp insight.Span) []insight.KeyBucket {
	first := at.Add(-sp.Window).Truncate(sp.Step)
	n := int(at.Sub(first)/sp.Step) + 1
	out := make([]insight.KeyBucket, 0, n)
	for i := range n {
		b := insight.KeyBucket{From: first.Add(time.Duration(i) * sp.Step),
			ElasticWaitP95Seconds: float64((i*7)%13) * 1.3, ElasticStarts: i % 4, Preemptions: (i * 3) % 5 / 3}
		if i%7 != 3 {
			b.FixedIdle = ptr(0.1 + float64((i*5)%9)/20)
		}
		out = append(out, b)
	}
	return out
}

// sample is an overview with something in every part, odd values where
// rounding shows (3.5999999999999996), a worker that drains, a missing
// idle sample in the series (over the default span) and a problem.
func sample(at time.Time, burstPending int) insight.Overview {
	return insight.Overview{
		At: at, Leader: "ctl-host-12345",
		Pools: []insight.PoolView{
			{Name: "fixed", Kind: "fixed", PricePerSlotHour: 1, Quota: 4, Busy: 3, Idle: 1, Workers: 1, CostPerHour: 4},
			{Name: "ondemand", Kind: "ondemand", PricePerSlotHour: 2.5, Busy: 1, Workers: 1, CostPerHour: 2.5},
			{Name: "spot", Kind: "spot", PricePerSlotHour: 1.2, Busy: 2, Idle: 1, Workers: 3, Draining: 1, CostPerHour: 3.5999999999999996},
		},
		Workers: []insight.WorkerView{
			{ID: "host-fixed-1", Pool: "fixed", Kind: "fixed", Slots: 4, Busy: 3, State: "up", AgeSeconds: 7260,
				Labels: map[string]string{queues.LabelGPUModel: "NVIDIA A100-SXM4-80GB"}, GPUs: []queues.GPUInfo{
					{Index: 0, UUID: "GPU-9a3b0000", Name: "NVIDIA A100-SXM4-80GB", MemoryMiB: 81920, Job: "019a8b7c6d5e4f3a2b1c0d9e8f7a"},
					{Index: 1, UUID: "GPU-9a3b0001", Name: "NVIDIA A100-SXM4-80GB", MemoryMiB: 81920, Job: "019a8b7c6d5e4f3a2b1c0d9e8f70"},
					{Index: 2, UUID: "GPU-9a3b0002", Name: "NVIDIA A100-SXM4-80GB", MemoryMiB: 81920},
					{Index: 3, UUID: "GPU-9a3b0003", Name: "NVIDIA A100-SXM4-80GB", MemoryMiB: 81920, Job: "019a8b7c6d5e4f3a2b1c0d9e8f71"},
				}},
			{ID: "ondemand-a1b2c3d4e5", Pool: "ondemand", Kind: "ondemand", Slots: 1, Busy: 1, State: "up", AgeSeconds: 185, BilledCost: 0.1284},
			{ID: "spot-0011223344", Pool: "spot", Kind: "spot", Slots: 1, Busy: 1, State: "up", AgeSeconds: 42, BilledCost: 0.04},
			{ID: "spot-5566778899", Pool: "spot", Kind: "spot", Slots: 1, Busy: 1, State: "draining", AgeSeconds: 900.5, BilledCost: 0.3},
			{ID: "spot-aabbccddee", Pool: "spot", Kind: "spot", Slots: 1, State: "up", AgeSeconds: 3.2, BilledCost: 0.02},
		},
		Queues:     []insight.QueueView{{Name: "core", Running: 3}, {Name: "burst", Pending: burstPending, Running: 3, OldestSeconds: 12.5}, {Name: "loan"}},
		Overflowed: 1,
		Running: []insight.RunningJob{
			{ID: "019a8b7c6d5e4f3a2b1c0d9e8f7a", Template: "train", Team: "ml", Class: "core", Queue: "core", Pool: "fixed",
				Worker: "host-fixed-1", Attempt: 1, WaitSeconds: 0.4, RunSeconds: 3720, Cost: 1.0333},
			{ID: "019a8b7c6d5e4f3a2b1c0d9e8f7b", Template: "etl", Team: "data", Class: "burst", Queue: "burst", Pool: "spot",
				Worker: "spot-0011223344", Attempt: 2, Runs: 1, WaitSeconds: 35.1, RunSeconds: 41, Cost: 0.0037},
			{ID: "019a8b7c6d5e4f3a2b1c0d9e8f7c", Template: "nightly", Team: "data", Class: "core", Queue: "overflow", Pool: "ondemand",
				Worker: "ondemand-a1b2c3d4e5", Attempt: 2, WaitSeconds: 0.3, RunSeconds: 60, Cost: 0.0417, Overflowed: true},
		},
		Key: insight.KeyMetrics{ElasticWaitP95Seconds: 14.2, ElasticStarts: 17, FixedIdleNow: ptr(0.25), FixedIdleMean: ptr(0.3125),
			Preemptions: 3, PreemptionsByKind: map[string]int{"preempted": 2, "requeued": 1, "lost": 0}, RecentSeconds: 3600, Series: series(at, defaultSpan)},
		Span: defaultSpan.Name,
		Cost: insight.CostView{From: at.Truncate(24 * time.Hour), Until: at, Total: 123.456, Fixed: 96, Elastic: 27.456, Idle: 21.5, LostWork: 1.25, Premium: 9.876,
			Pools: []insight.PoolCost{
				{Pool: "fixed", Kind: "fixed", Paid: 96, Used: 74.5, Idle: 21.5, IdleShare: 0.2239},
				{Pool: "spot", Kind: "spot", Paid: 20, Used: 20},
				{Pool: "ondemand", Kind: "ondemand", Paid: 7.456, Used: 7.456},
			},
			Teams: []insight.NamedCost{{Name: "ml", Cost: 80.1, SlotHours: 70.25, LostCost: 1.25, Premium: 5}, {Name: "data", Cost: 21.856, SlotHours: 15, Premium: 4.876}}},
		Recommendations: []advisor.Recommendation{
			{Kind: "quota", Severity: "warn", Title: "Raise the fixed quota to 6 slots",
				Action:      "Set pools.fixed.slots to 6: the elastic p95 wait was 4m 10s over the worst hour, above the 2m threshold.",
				RuleOfThumb: "Size fixed capacity at the 60th percentile of demand."},
			{Kind: "watermarks", Severity: "info", Title: "The watermarks look right", Action: "Nothing to change."},
		},
		Problems: []string{"recommendations: no job records in the window yet"},
		Shares: &shares.View{Quota: 4, Teams: []shares.TeamView{
			{Team: "a", Share: 2, Used: 3, Own: 2, OnLent: 1},
			{Team: "b", Share: 2, Lent: 1, LentTo: map[string]float64{"a": 1}, Idle: 1, Waiting: 1, OwnerWait: 4.5}}},
	}
}

// fakeAPI serves the page and a stand-in for the overview endpoints. Each
// answer's burst queue holds a new pending count, so a test can tell
// updates apart. Like the API, both endpoints take ?span= (one of
// insight.Spans; an unknown one is a 400) and serve a series over it.
type fakeAPI struct {
	srv      *httptest.Server
	n        atomic.Int64 // overviews served
	polls    atomic.Int64 // GET /api/v1/overview answered
	stream   atomic.Bool  // serve the stream; off = 500
	failing  atomic.Bool  // the stream sends "error" events instead of overviews
	overview atomic.Bool  // serve GET /api/v1/overview; off = 503
	streams  atomic.Int64 // streams open now
	stop     chan struct{}
	stopOnce sync.Once

	mu   sync.Mutex
	reqs []apiRequest // every overview and stream request, in order

	// build makes each overview served: sample unless the test says.
	build func(at time.Time, n int) insight.Overview
	// after, when set before the page opens, edits each overview once its
	// series is in place.
	after func(*insight.Overview)
	// costs, when set (under mu), answers GET /api/v1/costs; unset, the
	// endpoint is a 404.
	costs http.HandlerFunc
}

// apiRequest is one request to the overview endpoints: its path and its
// query string as sent.
type apiRequest struct {
	path, query string
}

func (r apiRequest) String() string { return r.path + "?" + r.query }

// requests returns the overview and stream requests received so far.
func (f *fakeAPI) requests() []apiRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]apiRequest(nil), f.reqs...)
}

// span records r and reads its ?span= as the API does: none is the
// default, an unknown one is answered 400 and ok is false.
func (f *fakeAPI) span(w http.ResponseWriter, r *http.Request) (sp insight.Span, ok bool) {
	f.mu.Lock()
	f.reqs = append(f.reqs, apiRequest{path: r.URL.Path, query: r.URL.RawQuery})
	f.mu.Unlock()
	name := r.URL.Query().Get("span")
	if name == "" {
		return defaultSpan, true
	}
	if sp, ok = insight.SpanNamed(name); !ok {
		http.Error(w, fmt.Sprintf("span %q: unknown", name), http.StatusBadRequest)
	}
	return sp, ok
}

func newFakeAPI(t *testing.T) *fakeAPI { return newFakeAPIServing(t, sample) }

// newFakeAPIServing is newFakeAPI serving build's overviews (given the
// time and the count served so far) instead of sample's.
func newFakeAPIServing(t *testing.T, build func(at time.Time, n int) insight.Overview) *fakeAPI {
	f := &fakeAPI{stop: make(chan struct{}), build: build}
	f.stream.Store(true)
	f.overview.Store(true)
	mux := http.NewServeMux()
	mux.Handle("/dashboard", Handler())
	mux.Handle("/dashboard/", Handler())
	mux.HandleFunc("GET /api/v1/overview", func(w http.ResponseWriter, r *http.Request) {
		sp, ok := f.span(w, r)
		if !ok {
			return
		}
		if !f.overview.Load() {
			http.Error(w, "down for the test", http.StatusServiceUnavailable)
			return
		}
		f.polls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(f.next(sp))
	})
	mux.HandleFunc("GET /api/v1/overview/stream", func(w http.ResponseWriter, r *http.Request) {
		sp, ok := f.span(w, r)
		if !ok {
			return
		}
		if !f.stream.Load() {
			http.Error(w, "no stream for the test", http.StatusInternalServerError)
			return
		}
		f.streams.Add(1)
		defer f.streams.Add(-1)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			event, b := "overview", []byte(nil)
			if f.failing.Load() {
				event, b = "error", []byte(`"redis: connection refused"`)
			} else {
				b, _ = json.Marshal(f.next(sp))
			}
			if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-tick.C:
			case <-r.Context().Done():
				return
			case <-f.stop:
				return
			}
		}
	})
	mux.HandleFunc("GET /api/v1/costs", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		h := f.costs
		f.mu.Unlock()
		if h == nil {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		f.stopOnce.Do(func() { close(f.stop) })
		f.srv.Close()
	})
	return f
}

// next is the next overview served, its series over sp.
func (f *fakeAPI) next(sp insight.Span) insight.Overview {
	n := f.n.Add(1)
	ov := f.build(time.Now(), int(n))
	ov.Span, ov.Key.Series = sp.Name, series(ov.At, sp)
	if f.after != nil {
		f.after(&ov)
	}
	return ov
}

// saveShot writes the page's screenshot to $BALLAST_DASHBOARD_SCREENSHOT
// when set, for a person to look at the layout; it always checks it is a
// PNG.
func saveShot(t *testing.T, b *browser.Browser) {
	t.Helper()
	png, err := b.Screenshot(10 * time.Second)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("the screenshot is not a PNG (%d bytes)", len(png))
	}
	if p := os.Getenv("BALLAST_DASHBOARD_SCREENSHOT"); p != "" {
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot in %s", p)
	}
}

func TestPageShowsEveryPartOfTheOverview(t *testing.T) {
	t.Parallel()
	b := startBrowser(t)
	api := newFakeAPI(t)
	if status, err := b.Open(api.srv.URL+"/dashboard", 10*time.Second); err != nil || status != http.StatusOK {
		t.Fatalf("opening the page: %d %v", status, err)
	}
	// The first render comes from the fetch, the next ones from the stream.
	if err := b.WaitUpdates(3, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(`document.body.dataset.conn === 'live'`, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	// Stop the stream so the page holds still while it is read.
	api.stopOnce.Do(func() { close(api.stop) })
	vals, err := b.Values(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ov := sample(time.Now(), 0)
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	want := map[string]string{
		"leader":                                       ov.Leader,
		"span":                                         "6h",
		"pool.fixed.price_per_slot_hour":               "1",
		"pool.fixed.quota":                             "4",
		"pool.fixed.busy":                              "3",
		"pool.fixed.idle":                              "1",
		"pool.spot.workers":                            "3",
		"pool.spot.draining":                           "1",
		"pool.spot.cost_per_hour":                      f(3.5999999999999996),
		"pool.ondemand.cost_per_hour":                  "2.5",
		"worker.spot-5566778899.state":                 "draining",
		"worker.spot-5566778899.age":                   "900.5",
		"worker.host-fixed-1.busy":                     "3",
		"worker.host-fixed-1.slots":                    "4",
		"worker.ondemand-a1b2c3d4e5.billed_cost":       "0.1284",
		"worker.host-fixed-1.gpus_held":                "3",
		"worker.host-fixed-1.gpu.0":                    "0:019a8b7c6d5e4f3a2b1c0d9e8f7a",
		"worker.host-fixed-1.gpu.2":                    "2:-",
		"worker.host-fixed-1.gpu_model":                "NVIDIA A100-SXM4-80GB",
		"worker.spot-0011223344.gpus":                  "–",
		"queue.burst.oldest":                           "12.5",
		"queue.core.running":                           "3",
		"running.019a8b7c6d5e4f3a2b1c0d9e8f7b.pool":    "spot",
		"running.019a8b7c6d5e4f3a2b1c0d9e8f7b.attempt": "2",
		"running.019a8b7c6d5e4f3a2b1c0d9e8f7b.runs":    "1",
		"running.019a8b7c6d5e4f3a2b1c0d9e8f7a.cost":    "1.0333",
		"running.019a8b7c6d5e4f3a2b1c0d9e8f7a.worker":  "host-fixed-1",
		"running.019a8b7c6d5e4f3a2b1c0d9e8f7c.pool":    "ondemand",
		"overflowed":                                   "1",
		"key.elastic_wait_p95_seconds":                 "14.2",
		"key.elastic_starts":                           "17",
		"key.fixed_idle_now":                           "0.25",
		"key.fixed_idle_mean":                          "0.3125",
		"key.preemptions":                              "3",
		"key.preemptions.preempted":                    "2",
		"key.preemptions.requeued":                     "1",
		"cost.total":                                   "123.456",
		"cost.premium":                                 "9.876",
		"cost.lost_work":                               "1.25",
		"cost.pool.fixed.idle_share":                   "0.2239",
		"cost.team.data.cost":                          "21.856",
		"cost.team.ml.slot_hours":                      "70.25",
		"shares.quota":                                 "4",
		"shares.a.used":                                "3",
		"shares.a.on_lent":                             "1",
		"shares.b.lent":                                "1",
		"shares.b.idle":                                "1",
		"shares.b.owner_wait":                          "4.5",
	}
	for k, v := range want {
		if got, ok := vals[k]; !ok || got != v {
			t.Errorf("%s = %q (shown: %v), want %q", k, got, ok, v)
		}
	}
	if _, ok := vals["key.preemptions.lost"]; ok {
		t.Errorf("a preemption kind with none is shown")
	}
	// The text rounds money to cents; data-v keeps the value.
	// A cost under half a cent shows two significant digits, not 0.00.
	text, err := browser.Eval[[]string](b, `['pool.spot.cost_per_hour', 'cost.total', 'key.fixed_idle_now', 'worker.host-fixed-1.age', 'running.019a8b7c6d5e4f3a2b1c0d9e8f7b.cost'].map(
		(k) => document.querySelector('[data-k="' + k + '"]').textContent)`, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(text) != "[3.60 123.46 25% 2h 01m 0.0037]" {
		t.Errorf("shown texts %q", text)
	}
	checks := map[string]string{
		`document.getElementById('running').dataset.count`:                      "3",
		`document.querySelectorAll('#running [data-k$=".overflowed"]').length`:  "1",
		`document.querySelectorAll('#recs tr').length`:                          "2",
		`document.querySelectorAll('#shares .sharebar rect').length`:            "4", // a: own, borrowed; b: lent, idle
		`document.getElementById('shares-panel').hidden`:                        "false",
		`document.querySelector('#alerts li.problem').textContent`:              ov.Problems[0],
		`document.getElementById('chart-preempt').dataset.points`:               "37", // 6 h of 10-minute buckets
		`document.getElementById('chart-idle').dataset.points`:                  "32", // 5 of them without an idle sample
		`document.getElementById('chart-idle').dataset.gaps`:                    "5",  // drawn as gaps, not zeros
		`document.getElementById('chart-wait').dataset.points`:                  "27", // every 4th bucket has no elastic start: no wait measured
		`document.getElementById('chart-wait').dataset.gaps`:                    "10",
		`document.getElementById('chart-wait').querySelectorAll('path').length`: "18", // nine runs of buckets, each a line and its area
		`document.getElementById('chart-idle').querySelectorAll('path').length`: "12", // broken into 6 segments by missing samples
	}
	for expr, w := range checks {
		got, err := browser.Eval[any](b, expr, 5*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if fmt.Sprint(got) != w {
			t.Errorf("%s = %v, want %s", expr, got, w)
		}
	}
	saveShot(t, b)
}

// When the stream is refused the page polls every 2 s, and it says
// stale once five seconds pass without an update.
func TestPagePollsWithoutTheStreamAndMarksStale(t *testing.T) {
	t.Parallel()
	b := startBrowser(t)
	api := newFakeAPI(t)
	api.stream.Store(false)
	if status, err := b.Open(api.srv.URL+"/dashboard", 10*time.Second); err != nil || status != http.StatusOK {
		t.Fatalf("opening the page: %d %v", status, err)
	}
	start := time.Now()
	if err := b.WaitUpdates(3, 8*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("three renders by polling in %s", time.Since(start).Round(time.Millisecond))
	if err := b.WaitFor(`document.body.dataset.conn === 'polling'`, time.Second); err != nil {
		t.Fatal(err)
	}
	vals, err := b.Values(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := vals["queue.burst.pending"], strconv.FormatInt(api.n.Load(), 10); got != want {
		t.Errorf("queue.burst.pending = %s, want the last poll's %s", got, want)
	}

	api.overview.Store(false)
	down := time.Now()
	if err := b.WaitFor(`document.body.dataset.conn === 'stale'`, 9*time.Second); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(down); d < 2*time.Second {
		t.Errorf("stale %s after the API stopped answering; want about 5 s after the last update", d)
	}
	msg, err := browser.Eval[string](b, `document.querySelector('#alerts li.error').textContent`, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := "GET /api/v1/overview answered 503"; !strings.HasPrefix(msg, want) {
		t.Errorf("the page's error reads %q, want it to start with %q", msg, want)
	}
}

// An "error" event from the controller (it could not read the overview
// this tick) is shown, but the stream is kept: no polling, and the next
// overview clears the message.
func TestPageShowsTheStreamsErrorEvents(t *testing.T) {
	t.Parallel()
	b := startBrowser(t)
	api := newFakeAPI(t)
	if status, err := b.Open(api.srv.URL+"/dashboard", 10*time.Second); err != nil || status != http.StatusOK {
		t.Fatalf("opening the page: %d %v", status, err)
	}
	if err := b.WaitFor(`document.body.dataset.conn === 'live'`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	polls := api.polls.Load()
	api.failing.Store(true)
	const shown = `((document.querySelector('#alerts li.error') || {}).textContent || '')`
	if err := b.WaitFor(shown+`.includes('redis: connection refused')`, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got, _ := browser.Eval[string](b, `document.body.dataset.conn`, time.Second); got != "live" {
		t.Errorf("the page is %s after an error event, want still live", got)
	}
	api.failing.Store(false)
	if err := b.WaitFor(shown+` === ''`, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if n := api.polls.Load(); n != polls {
		t.Errorf("the page polled %d times while the stream was up", n-polls)
	}
}

// spanShown is what the page shows of the charts' span.
type spanShown struct {
	Span    string   `json:"span"`    // the [data-k=span] text
	Pressed []string `json:"pressed"` // the buttons marked aria-pressed
	On      []string `json:"on"`      // the buttons with the class on
	Points  string   `json:"points"`  // the points of the preemptions chart (one a bucket)
	From    string   `json:"from"`    // the time of the charts' first bucket, as shown
	Hash    string   `json:"hash"`    // location.hash
}

const spanShownJS = `(() => {
	const pressed = (sel) => Array.from(document.querySelectorAll('#spans button' + sel), (e) => e.dataset.span);
	return {
		span: document.querySelector('[data-k="span"]').textContent,
		pressed: pressed('[aria-pressed="true"]'),
		on: pressed('.on'),
		points: document.getElementById('chart-preempt').dataset.points || '',
		from: document.querySelector('#axis-wait > span:last-child').textContent.split(' – ')[0],
		hash: location.hash,
	};
})()`

// The buttons above the charts switch their span. The page starts on the
// API's default without asking for a span; a click on 1h asks the
// overview and a new stream (the old one closed) for span=1h and redraws
// the charts from the 61 one-minute buckets; the choice is kept in the
// address, so a reload keeps it, #span=24h starts on 24h (and polls for
// it without the stream) and a span the API does not offer starts on the
// default.
func TestPageSwitchesTheSeriesSpan(t *testing.T) {
	t.Parallel()
	b := startBrowser(t)
	api := newFakeAPI(t)
	if status, err := b.Open(api.srv.URL+"/dashboard", 10*time.Second); err != nil || status != http.StatusOK {
		t.Fatalf("opening the page: %d %v", status, err)
	}
	if err := b.WaitFor(`document.body.dataset.conn === 'live'`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	shown := func() spanShown {
		t.Helper()
		s, err := browser.Eval[spanShown](b, spanShownJS, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// since returns the requests after the first mark, checking that
	// each asks for query and that both endpoints were asked.
	since := func(mark int, query string) {
		t.Helper()
		reqs := api.requests()[mark:]
		paths := map[string]bool{}
		for _, r := range reqs {
			paths[r.path] = true
			if r.query != query {
				t.Errorf("request %s, want the query %q", r, query)
			}
		}
		if !paths["/api/v1/overview"] || !paths["/api/v1/overview/stream"] {
			t.Errorf("requests %v: want both the overview and its stream", reqs)
		}
	}
	check := func(got spanShown, span, points, hash string) {
		t.Helper()
		if got.Span != span || fmt.Sprint(got.Pressed) != "["+span+"]" || fmt.Sprint(got.On) != "["+span+"]" ||
			got.Points != points || got.Hash != hash {
			t.Errorf("the page shows %+v, want span %s marked, %s points and the hash %q", got, span, points, hash)
		}
	}

	since(0, "")
	before := shown()
	check(before, "6h", "37", "")

	mark := len(api.requests())
	if _, err := browser.Eval[bool](b, `document.querySelector('#spans button[data-span="1h"]').click(), true`, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(`document.querySelector('[data-k="span"]').textContent === '1h'`, 5*time.Second); err != nil {
		t.Fatalf("the page did not switch to 1h: %v (it shows %+v)", err, shown())
	}
	// The new stream is open and the old one closed, and the page goes on
	// drawing from the new one.
	testenv.Eventually(t, 5*time.Second, "a span=1h stream open, and only it", func() bool {
		reqs := api.requests()[mark:]
		return len(reqs) > 0 && reqs[len(reqs)-1] == apiRequest{"/api/v1/overview/stream", "span=1h"} && api.streams.Load() == 1
	})
	updates, err := browser.Eval[string](b, `document.body.dataset.updates`, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(`Number(document.body.dataset.updates) > `+updates+` && document.body.dataset.conn === 'live'`, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	since(mark, "span=1h")
	after := shown()
	check(after, "1h", "61", "#span=1h")
	if after.From == before.From {
		t.Errorf("the charts still start at %s after switching from 6h to 1h", after.From)
	}

	// reload loads the page again, with the address's hash set to hash
	// first unless it is empty, waits until its connection is conn and
	// returns the number of requests before.
	reload := func(hash, conn string) int {
		t.Helper()
		mark := len(api.requests())
		set := ""
		if hash != "" {
			set = fmt.Sprintf("history.replaceState(null, '', %q); ", hash)
		}
		// The marker on the window is gone once the page is loaded again.
		if _, err := browser.Eval[bool](b, `window.notReloaded = true; `+set+`setTimeout(() => location.reload(), 10); true`, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 10*time.Second, "the page loaded again and "+conn, func() bool {
			ok, err := browser.Eval[bool](b, `window.notReloaded === undefined && document.body.dataset.conn === '`+conn+`'`, time.Second)
			return err == nil && ok
		})
		return mark
	}
	mark = reload("", "live")
	since(mark, "span=1h")
	check(shown(), "1h", "61", "#span=1h")

	// Without the stream the page polls, for the span too.
	api.stream.Store(false)
	mark = reload("#span=24h", "polling")
	testenv.Eventually(t, 5*time.Second, "a poll after the first read", func() bool {
		n := 0
		for _, r := range api.requests()[mark:] {
			if r.path == "/api/v1/overview" {
				n++
			}
		}
		return n >= 2
	})
	since(mark, "span=24h")
	check(shown(), "24h", "49", "#span=24h")
	api.stream.Store(true)

	mark = reload("#span=7h", "live")
	since(mark, "")
	check(shown(), "6h", "37", "#span=7h")
}

// Names, teams, templates, job and worker IDs, the leader, advice and
// problems come from users and hosts: the page must show them as text,
// never parse them as HTML. The overview served here puts markup that
// would run or add elements in each of them, and the page is compared
// with the same overview holding plain strings instead: the same elements
// (so none was injected), no handler run, and every string shown exactly.
func TestPageShowsHostileStringsAsText(t *testing.T) {
	t.Parallel()
	const (
		xssImg    = `<img src=x onerror="document.body.dataset.pwned=1">`
		xssScript = `"><script>document.body.dataset.pwned=2</script>`
		xssURL    = `javascript:alert(1)`
		xssBold   = `<b>bold</b><img src=x onerror="document.body.dataset.pwned=3">`
	)
	// overview is sample with img, script, url and bold in place of every
	// string a user or a host chooses.
	overview := func(img, script, url, bold string) func(time.Time, int) insight.Overview {
		return func(at time.Time, n int) insight.Overview {
			ov := sample(at, n)
			ov.Leader = img
			ov.Pools[2].Name = img
			ov.Workers[0].ID = url
			ov.Workers[0].Labels[queues.LabelGPUModel], ov.Workers[0].GPUs[1].Job = bold, img
			ov.Workers[3].ID, ov.Workers[3].Pool = script, img
			ov.Queues[1].Name = bold
			r := &ov.Running[0]
			r.ID, r.Template, r.Team, r.Worker = img, script, url, bold
			r = &ov.Running[1]
			r.ID, r.Template, r.Team, r.Worker = script, img, bold, url
			ov.Cost.Pools[2].Pool = img
			ov.Cost.Teams[0].Name, ov.Cost.Teams[1].Name = img, script
			rec := &ov.Recommendations[0]
			rec.Title, rec.Action, rec.RuleOfThumb = bold, "Set "+bold+" to "+script, url+" "+bold
			ov.Problems = []string{"recommendations: " + img}
			return ov
		}
	}
	plain := newFakeAPIServing(t, overview("plain-img", "plain-script", "plain-url", "plain-bold"))
	hostile := newFakeAPIServing(t, overview(xssImg, xssScript, xssURL, xssBold))

	b := startBrowser(t)
	// show opens the page on api, lets it draw a few overviews, stops the
	// stream and returns how many elements of each tag the page holds.
	show := func(api *fakeAPI) map[string]int {
		t.Helper()
		if status, err := b.Open(api.srv.URL+"/dashboard", 10*time.Second); err != nil || status != http.StatusOK {
			t.Fatalf("opening the page: %d %v", status, err)
		}
		if err := b.WaitUpdates(3, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		api.stopOnce.Do(func() { close(api.stop) })
		// An injected <img src=x> fails to load and runs its onerror: let
		// a load of the same URL, started after the renders, fail first.
		if _, err := browser.Eval[bool](b, `(() => { const i = new Image();
			i.onerror = i.onload = () => { document.body.dataset.probe = 'done'; };
			i.src = 'x?probe'; return true; })()`, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		if err := b.WaitFor(`document.body.dataset.probe === 'done'`, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		tags, err := browser.Eval[map[string]int](b, `(() => { const n = {};
			for (const e of document.querySelectorAll('*')) { const k = e.tagName.toLowerCase(); n[k] = (n[k] || 0) + 1; }
			return n; })()`, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return tags
	}
	const injectable = `document.querySelectorAll('img, script:not([src])').length`

	plainTags := show(plain)
	plainInjectable, err := browser.Eval[int](b, injectable, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if plainTags["tr"] == 0 || plainTags["b"] == 0 {
		t.Fatalf("the plain page has no rows or no bold: %v", plainTags)
	}

	hostileTags := show(hostile)
	// The page's Content-Security-Policy blocks inline handlers, so pwned
	// stays unset even if markup got in; the element counts and the texts
	// below are what catch that. This catches a script run despite it.
	if pwned, err := browser.Eval[string](b, `typeof document.body.dataset.pwned`, 5*time.Second); err != nil || pwned != "undefined" {
		pw, _ := browser.Eval[string](b, `String(document.body.dataset.pwned)`, 5*time.Second)
		t.Errorf("document.body.dataset.pwned is %s (%q, %v): a hostile string ran as HTML", pwned, pw, err)
	}
	if n, err := browser.Eval[int](b, injectable, 5*time.Second); err != nil || n != plainInjectable {
		t.Errorf("%s = %d (%v) on the hostile page, %d on the plain one", injectable, n, err, plainInjectable)
	}
	if fmt.Sprint(hostileTags) != fmt.Sprint(plainTags) {
		t.Errorf("the hostile page's elements differ from the plain page's:\nhostile %v\nplain   %v", hostileTags, plainTags)
	}

	// Every hostile string is shown as it is, in its table cell.
	ov := overview(xssImg, xssScript, xssURL, xssBold)(time.Now(), 0)
	cells := []struct {
		table     string
		row, cell int
		want      string
	}{
		{"running", 0, 0, ov.Running[0].ID},
		{"running", 0, 1, ov.Running[0].Template},
		{"running", 0, 2, ov.Running[0].Team},
		{"running", 0, 5, ov.Running[0].Worker},
		{"running", 1, 0, ov.Running[1].ID},
		{"running", 1, 1, ov.Running[1].Template},
		{"running", 1, 2, ov.Running[1].Team},
		{"running", 1, 5, ov.Running[1].Worker},
		{"pools", 2, 0, ov.Pools[2].Name},
		{"workers", 0, 0, ov.Workers[0].ID},
		{"workers", 3, 0, ov.Workers[3].ID},
		{"workers", 3, 1, ov.Workers[3].Pool},
		{"queues", 1, 0, ov.Queues[1].Name},
		{"cost-pools", 2, 0, ov.Cost.Pools[2].Pool},
		{"cost-teams", 0, 0, ov.Cost.Teams[0].Name},
		{"cost-teams", 1, 0, ov.Cost.Teams[1].Name},
		{"recs", 0, 1, ov.Recommendations[0].Title},
		{"recs", 0, 2, ov.Recommendations[0].Action},
		{"recs", 0, 3, ov.Recommendations[0].RuleOfThumb},
	}
	tables := map[string][][]string{}
	for _, c := range cells {
		rows, ok := tables[c.table]
		if !ok {
			rows, err = browser.Eval[[][]string](b, fmt.Sprintf(`Array.from(document.getElementById(%q).rows,
				(tr) => Array.from(tr.cells, (td) => td.textContent))`, c.table), 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			tables[c.table] = rows
		}
		if c.row >= len(rows) || c.cell >= len(rows[c.row]) {
			t.Errorf("#%s has no cell %d of row %d: %q", c.table, c.cell, c.row, rows)
			continue
		}
		if got := rows[c.row][c.cell]; got != c.want {
			t.Errorf("#%s row %d cell %d shows %q, want %q", c.table, c.row, c.cell, got, c.want)
		}
	}
	if title := tables["recs"][0][1]; !strings.Contains(title, "<b>bold</b>") {
		t.Errorf("the recommendation's title reads %q, want the text <b>bold</b> in it", title)
	}
	// Attributes and the header carry them too, unchanged.
	checks := map[string]string{
		`document.getElementById('leader').textContent`:                                 ov.Leader,
		`document.getElementById('leader').title`:                                       ov.Leader,
		`document.querySelector('#alerts li.problem').textContent`:                      ov.Problems[0],
		`document.querySelector('#running tr').dataset.job`:                             ov.Running[0].ID,
		`document.querySelector('#running tr td a').title`:                              ov.Running[0].ID,
		`document.querySelector('#running tr:nth-child(2) td:nth-child(6) span').title`: ov.Running[1].Worker,
	}
	for expr, want := range checks {
		if got, err := browser.Eval[string](b, expr, 5*time.Second); err != nil || got != want {
			t.Errorf("%s = %q (%v), want %q", expr, got, err, want)
		}
	}
	vals, err := b.Values(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"running." + xssImg + ".template":  xssScript,
		"running." + xssScript + ".team":   xssBold,
		"worker." + xssScript + ".pool":    xssImg,
		"worker." + xssURL + ".gpu_model":  xssBold,
		"worker." + xssURL + ".gpu.1":      "1:" + xssImg,
		"queue." + xssBold + ".name":       xssBold,
		"pool." + xssImg + ".name":         xssImg,
		"running." + xssImg + ".id":        xssImg,
		"running." + xssScript + ".worker": xssURL,
	} {
		if got, ok := vals[k]; !ok || got != want {
			t.Errorf("[data-k=%q] = %q (shown: %v), want %q", k, got, ok, want)
		}
	}
}
