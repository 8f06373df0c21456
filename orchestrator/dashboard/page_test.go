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

	"github.com/ballastdev/ballast/internal/browser"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/advisor"
	"github.com/ballastdev/ballast/orchestrator/insight"
)

// These tests run the page in headless Chromium against a stand-in API
// that serves hand-made overviews, so they check what the script draws
// (every section, absent values, the fallback to polling, the stale mark)
// without a controller. The e2e test checks it against a real one.

// startBrowser starts Chromium for t; without one the test fails under
// CI and is skipped elsewhere.
func startBrowser(t *testing.T) *browser.Browser {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	b, err := browser.Start(context.Background(), browser.Options{})
	if errors.Is(err, browser.ErrNotFound) {
		testenv.Unavailable(t, "Chromium", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func ptr(v float64) *float64 { return &v }

// sample is an overview with something in every part, odd values where
// rounding shows (3.5999999999999996), a worker that drains, a missing
// idle sample in the series and a problem.
func sample(at time.Time, burstPending int) insight.Overview {
	var series []insight.KeyBucket
	for i := range 24 {
		b := insight.KeyBucket{From: at.Add(time.Duration(i-24) * 5 * time.Minute),
			ElasticWaitP95Seconds: float64((i*7)%13) * 1.3, ElasticStarts: i % 4, Preemptions: (i * 3) % 5 / 3}
		if i%7 != 3 {
			b.FixedIdle = ptr(0.1 + float64((i*5)%9)/20)
		}
		series = append(series, b)
	}
	return insight.Overview{
		At: at, Leader: "ctl-host-12345",
		Pools: []insight.PoolView{
			{Name: "fixed", Kind: "fixed", PricePerSlotHour: 1, Quota: 4, Busy: 3, Idle: 1, Workers: 1, CostPerHour: 4},
			{Name: "ondemand", Kind: "ondemand", PricePerSlotHour: 2.5, Busy: 1, Workers: 1, CostPerHour: 2.5},
			{Name: "spot", Kind: "spot", PricePerSlotHour: 1.2, Busy: 2, Idle: 1, Workers: 3, Draining: 1, CostPerHour: 3.5999999999999996},
		},
		Workers: []insight.WorkerView{
			{ID: "host-fixed-1", Pool: "fixed", Kind: "fixed", Slots: 4, Busy: 3, State: "up", AgeSeconds: 7260},
			{ID: "ondemand-a1b2c3d4e5", Pool: "ondemand", Kind: "ondemand", Slots: 1, Busy: 1, State: "up", AgeSeconds: 185, BilledCost: 0.1284},
			{ID: "spot-0011223344", Pool: "spot", Kind: "spot", Slots: 1, Busy: 1, State: "up", AgeSeconds: 42, BilledCost: 0.04},
			{ID: "spot-5566778899", Pool: "spot", Kind: "spot", Slots: 1, Busy: 1, State: "draining", AgeSeconds: 900.5, BilledCost: 0.3},
			{ID: "spot-aabbccddee", Pool: "spot", Kind: "spot", Slots: 1, State: "up", AgeSeconds: 3.2, BilledCost: 0.02},
		},
		Queues: []insight.QueueView{{Name: "core", Running: 3}, {Name: "burst", Pending: burstPending, Running: 3, OldestSeconds: 12.5}, {Name: "loan"}},
		Running: []insight.RunningJob{
			{ID: "019a8b7c6d5e4f3a2b1c0d9e8f7a", Template: "train", Team: "ml", Class: "core", Queue: "core", Pool: "fixed",
				Worker: "host-fixed-1", Attempt: 1, WaitSeconds: 0.4, RunSeconds: 3720, Cost: 1.0333},
			{ID: "019a8b7c6d5e4f3a2b1c0d9e8f7b", Template: "etl", Team: "data", Class: "burst", Queue: "burst", Pool: "spot",
				Worker: "spot-0011223344", Attempt: 2, WaitSeconds: 35.1, RunSeconds: 41, Cost: 0.0137},
		},
		Key: insight.KeyMetrics{ElasticWaitP95Seconds: 14.2, ElasticStarts: 17, FixedIdleNow: ptr(0.25), FixedIdleMean: ptr(0.3125),
			Preemptions: 3, PreemptionsByKind: map[string]int{"preempted": 2, "requeued": 1, "lost": 0}, RecentSeconds: 3600, Series: series},
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
	}
}

// fakeAPI serves the page and a stand-in for the overview endpoints. Each
// answer's burst queue holds a new pending count, so a test can tell
// updates apart.
type fakeAPI struct {
	srv      *httptest.Server
	n        atomic.Int64 // overviews served
	polls    atomic.Int64 // GET /api/v1/overview answered
	stream   atomic.Bool  // serve the stream; off = 500
	failing  atomic.Bool  // the stream sends "error" events instead of overviews
	overview atomic.Bool  // serve GET /api/v1/overview; off = 503
	stop     chan struct{}
	stopOnce sync.Once
}

func newFakeAPI(t *testing.T) *fakeAPI {
	f := &fakeAPI{stop: make(chan struct{})}
	f.stream.Store(true)
	f.overview.Store(true)
	mux := http.NewServeMux()
	mux.Handle("/dashboard", Handler())
	mux.Handle("/dashboard/", Handler())
	mux.HandleFunc("GET /api/v1/overview", func(w http.ResponseWriter, r *http.Request) {
		if !f.overview.Load() {
			http.Error(w, "down for the test", http.StatusServiceUnavailable)
			return
		}
		f.polls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(f.next())
	})
	mux.HandleFunc("GET /api/v1/overview/stream", func(w http.ResponseWriter, r *http.Request) {
		if !f.stream.Load() {
			http.Error(w, "no stream for the test", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			event, b := "overview", []byte(nil)
			if f.failing.Load() {
				event, b = "error", []byte(`"redis: connection refused"`)
			} else {
				b, _ = json.Marshal(f.next())
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
	f.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		f.stopOnce.Do(func() { close(f.stop) })
		f.srv.Close()
	})
	return f
}

func (f *fakeAPI) next() insight.Overview {
	n := f.n.Add(1)
	return sample(time.Now(), int(n))
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
		"queue.burst.oldest":                           "12.5",
		"queue.core.running":                           "3",
		"running.019a8b7c6d5e4f3a2b1c0d9e8f7b.pool":    "spot",
		"running.019a8b7c6d5e4f3a2b1c0d9e8f7b.attempt": "2",
		"running.019a8b7c6d5e4f3a2b1c0d9e8f7a.cost":    "1.0333",
		"running.019a8b7c6d5e4f3a2b1c0d9e8f7a.worker":  "host-fixed-1",
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
	text, err := browser.Eval[[]string](b, `['pool.spot.cost_per_hour', 'cost.total', 'key.fixed_idle_now', 'worker.host-fixed-1.age'].map(
		(k) => document.querySelector('[data-k="' + k + '"]').textContent)`, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(text) != "[3.60 123.46 25% 2h 01m]" {
		t.Errorf("shown texts %q", text)
	}
	checks := map[string]string{
		`document.getElementById('running').dataset.count`:                      "2",
		`document.querySelectorAll('#recs tr').length`:                          "2",
		`document.querySelector('#alerts li.problem').textContent`:              ov.Problems[0],
		`document.getElementById('chart-idle').dataset.points`:                  "21", // 24 buckets, 3 without an idle sample
		`document.getElementById('chart-wait').querySelectorAll('path').length`: "2",  // one line and its area
		`document.getElementById('chart-idle').querySelectorAll('path').length`: "8",  // broken into 4 segments by missing samples
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
