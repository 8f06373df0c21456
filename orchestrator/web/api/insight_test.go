package api_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/web/api"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/usage"
)

// TestInsightEndpoints checks the overview, its stream, the cost and advice
// windows, and the token rules the dashboard relies on, against a real
// store with one running job.
func TestInsightEndpoints(t *testing.T) {
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := t.Context()
	w := queues.WorkerInfo{ID: "fixed-1", Pool: "onprem", Slots: 2, StartedAt: time.Now().Add(-time.Hour)}
	if _, err := store.Heartbeat(ctx, w, nil); err != nil {
		t.Fatal(err)
	}
	sub, err := store.Submit(ctx, jobs.Spec{Template: "etl", Team: "data", Command: []string{"true"}, Class: jobs.ClassCore,
		Rhythm: jobs.RhythmPeriodic, Timeout: jobs.Duration(time.Hour), Grace: jobs.Duration(time.Second)}, queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := store.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, w.ID); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	live := &insight.Live{Source: insight.Source{Store: store, Accounting: usage.New(store), Quota: map[string]int{"onprem": 2},
		Pools: []policy.Pool{{Name: "onprem", Kind: policy.PoolFixed, PricePerSlotHour: 1.5}}}}
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>dashboard</html>")) })
	srv := httptest.NewServer(api.Handler(store, nil, "s3cret", api.Flows{}, api.Insight{Live: live, Dashboard: page, StreamEvery: 50 * time.Millisecond}))
	t.Cleanup(srv.Close)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string, set func(*http.Request)) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if set != nil {
			set(req)
		}
		res, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	bearer := func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret") }

	if res := get("/api/v1/overview", nil); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %d", res.StatusCode)
	}
	res := get("/api/v1/overview", bearer)
	var o insight.Overview
	if err := json.NewDecoder(res.Body).Decode(&o); err != nil || res.StatusCode != 200 {
		t.Fatalf("overview: %d %v", res.StatusCode, err)
	}
	if len(o.Running) != 1 || o.Running[0].Pool != "onprem" || o.Running[0].Team != "data" || len(o.Pools) != 1 ||
		o.Pools[0].Busy != 1 || o.Pools[0].Idle != 1 || o.Pools[0].CostPerHour != 3 || o.Span != "6h" || len(o.Key.Series) != 37 {
		t.Fatalf("overview %+v", o)
	}
	// A shorter span: an hour in one-minute buckets.
	res = get("/api/v1/overview?span=1h", bearer)
	o = insight.Overview{}
	if err := json.NewDecoder(res.Body).Decode(&o); err != nil || o.Span != "1h" || len(o.Key.Series) != 61 || len(o.Running) != 1 {
		t.Fatalf("span=1h: %v span %q, %d buckets", err, o.Span, len(o.Key.Series))
	}

	// The dashboard trades a right token for a cookie, which reads may use
	// and writes may not.
	if res := get("/dashboard?token=wrong", nil); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d", res.StatusCode)
	}
	res = get("/dashboard?token=s3cret", nil)
	var cookie *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == "ballast_token" {
			cookie = c
		}
	}
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard" || cookie == nil || !cookie.HttpOnly {
		t.Fatalf("login: %d %q %+v", res.StatusCode, res.Header.Get("Location"), cookie)
	}
	withCookie := func(r *http.Request) { r.AddCookie(cookie) }
	// The cookie is not the token and does not work as one.
	if cookie.Value == "s3cret" || strings.Contains(cookie.Value, "s3cret") {
		t.Fatalf("the cookie holds the token: %q", cookie.Value)
	}
	if res := get("/api/v1/overview", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+cookie.Value) }); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the cookie's value as a bearer token: %d", res.StatusCode)
	}
	forged := &http.Cookie{Name: "ballast_token", Value: "s3cret"}
	if res := get("/api/v1/overview", func(r *http.Request) { r.AddCookie(forged) }); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the raw token as a cookie: %d", res.StatusCode)
	}
	if res := get("/api/v1/overview", withCookie); res.StatusCode != 200 {
		t.Fatalf("read with the cookie: %d", res.StatusCode)
	}
	req, _ := http.NewRequest("POST", srv.URL+"/api/v1/jobs/"+sub.Job.ID+"/cancel", nil)
	req.AddCookie(cookie)
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("a write with only the cookie must be refused: %d", res.StatusCode)
	}
	if res := get("/", nil); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard" {
		t.Fatalf("/ → %d %q", res.StatusCode, res.Header.Get("Location"))
	}

	// Windows: bad ones are named; a good one prices the running job.
	for path, want := range map[string]string{
		"/api/v1/costs?window=yesterday":                                     "window: give a positive duration",
		"/api/v1/overview?span=2d":                                           `span "2d": use one of 1h, 6h, 24h`,
		"/api/v1/overview/stream?span=x":                                     `span "x": use one of`,
		"/api/v1/costs?window=-1h":                                           "window: give a positive duration",
		"/api/v1/costs?window=800h":                                          "ask for at most",
		"/api/v1/recommendations?from=2026-13-01":                            "from: give an RFC 3339 time",
		"/api/v1/costs?from=2026-11-02T00:00:00Z&until=2026-11-01T00:00:00Z": "from must be before until",
	} {
		res := get(path, bearer)
		var body map[string]map[string]any
		_ = json.NewDecoder(res.Body).Decode(&body)
		if msg, _ := body["error"]["message"].(string); res.StatusCode != 400 || !strings.Contains(msg, want) {
			t.Errorf("%s: %d %q, want 400 %q", path, res.StatusCode, msg, want)
		}
	}
	var costs struct {
		Summary insight.CostView `json:"summary"`
		Report  struct {
			Jobs []map[string]any `json:"jobs"`
		} `json:"report"`
	}
	res = get("/api/v1/costs?window=2h", bearer)
	if err := json.NewDecoder(res.Body).Decode(&costs); err != nil || res.StatusCode != 200 || len(costs.Report.Jobs) != 0 {
		t.Fatalf("costs: %d %v, %d job rows without jobs=true", res.StatusCode, err, len(costs.Report.Jobs))
	}
	res = get("/api/v1/costs?window=2h&jobs=true", bearer)
	if err := json.NewDecoder(res.Body).Decode(&costs); err != nil || len(costs.Report.Jobs) != 1 || costs.Report.Jobs[0]["job"] != sub.Job.ID {
		t.Fatalf("costs with jobs=true: %v %+v", err, costs.Report.Jobs)
	}
	// Two hours of a 2-slot quota at 1.5 is paid, whatever ran.
	if c := costs.Summary; c.Fixed < 5.999 || c.Fixed > 6.001 || len(c.Teams) != 1 || c.Teams[0].Name != "data" {
		t.Fatalf("costs %+v", c)
	}

	// The stream sends overviews, one per period, with the cookie alone.
	res = get("/api/v1/overview/stream", withCookie)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	events := 0
	for events < 2 && sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var o insight.Overview
			if err := json.Unmarshal([]byte(data), &o); err != nil || len(o.Running) != 1 {
				t.Fatalf("stream event: %v %+v", err, o)
			}
			events++
		}
	}
	if events != 2 {
		t.Fatalf("got %d events: %v", events, sc.Err())
	}
}
