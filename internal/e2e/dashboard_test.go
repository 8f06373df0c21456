package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/internal/tools/browser"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
)

// TestDashboardShowsTheOverviewLive: a `ballast controller` with an API
// token and a fixed worker; the dashboard, opened in headless Chromium
// with ?token=, shows the numbers GET /api/v1/overview gives, and a job
// submitted afterwards appears in its running table within seconds
// without a reload, on the pool the API reports. `ballast-tools screenshot`
// then writes a PNG of it.
func TestDashboardShowsTheOverviewLive(t *testing.T) {
	b := startChromium(t)

	r := newHybridRig(t, map[string]config.PoolConfig{
		"fixed": {Kind: config.PoolFixed, Slots: 2, PricePerSlotHour: 1.5},
	}, 1.0, 0.4)
	const token = "dashboard-e2e-token"
	r.cfg.HTTP.APIToken = token
	r.saveConfig()
	r.startFixedWorker("fixed-1", 2)
	ctl := r.startBallast("ctl", "controller", "--config", r.cfgPath, "--provider", "none")
	api := apiAddress(t, ctl)
	hc := &http.Client{Timeout: 5 * time.Second}
	overview := func() insight.Overview {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, api+"/api/v1/overview", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := hc.Do(req)
		if err != nil {
			t.Fatalf("GET /api/v1/overview: %v", err)
		}
		defer res.Body.Close()
		var o insight.Overview
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET /api/v1/overview: %s", res.Status)
		}
		if err := json.NewDecoder(res.Body).Decode(&o); err != nil {
			t.Fatalf("GET /api/v1/overview: %v", err)
		}
		return o
	}
	quiet := func(o insight.Overview) bool {
		p := poolOf(o, "fixed")
		return o.Leader != "" && p != nil && p.Workers == 1 && p.Busy == 0 && p.Idle == 2 && len(o.Running) == 0
	}
	testenv.Eventually(t, 15*time.Second, "the controller leading with the fixed worker idle", func() bool {
		if ctl.exited() {
			t.Fatalf("the controller exited:\n%s", ctl.log())
		}
		return quiet(overview())
	})

	// Without the token the page loads but its data does not: the API
	// is guarded, and the page says how to sign in.
	if status, err := b.Open(api+"/dashboard", 10*time.Second); err != nil || status != http.StatusOK {
		t.Fatalf("GET /dashboard without a token: %d %v\n%s", status, err, ctl.log())
	}
	if err := b.WaitFor(`((document.querySelector('#alerts li.error') || {}).textContent || '').includes('token')`, 10*time.Second); err != nil {
		t.Fatalf("the page without a token does not say to sign in: %v", err)
	}

	opened := time.Now()
	if status, err := b.Open(api+"/dashboard?token="+token, 10*time.Second); err != nil || status != http.StatusOK {
		t.Fatalf("GET /dashboard?token=: %d %v\n%s", status, err, ctl.log())
	}
	if err := b.WaitUpdates(2, 15*time.Second); err != nil {
		t.Fatalf("the dashboard did not update: %v\n%s", err, ctl.log())
	}
	t.Logf("first two renders %s after opening the page", time.Since(opened).Round(time.Millisecond))
	if url, _ := browser.Eval[string](b, `location.href`, time.Second); url != api+"/dashboard" {
		t.Errorf("the page is at %s, want the token gone from the address (%s/dashboard)", url, api)
	}
	if err := b.WaitFor(`document.body.dataset.conn === 'live'`, 5*time.Second); err != nil {
		t.Errorf("the page is not live on the stream: %v", err)
	}

	// The page and the API read at about the same time. Capacity, queues
	// and prices hold still in a quiet state; today's cost grows with the
	// quota every second, so the page's total is the API's moved by the
	// cost rate over the time between the two overviews. An overview's
	// cost is worked out at most every 10 s (insight.Live's PastMaxAge),
	// the rest of it each second, so two overviews a second apart may
	// also share one cost: then the totals are equal. Two reads that
	// straddle a new cost but not a new rest fit neither, and are read
	// again.
	costAgrees := func(page map[string]string, o insight.Overview) bool {
		total, err := strconv.ParseFloat(page["cost.total"], 64)
		at, terr := time.Parse(time.RFC3339Nano, page["at"])
		if err != nil || terr != nil {
			return false
		}
		return total == o.Cost.Total || math.Abs(total-(o.Cost.Total+costRate(o)*at.Sub(o.At).Hours())) <= 1e-6
	}
	var page map[string]string
	var before, after insight.Overview
	testenv.Eventually(t, 10*time.Second, "the page and the API agreeing in a quiet state", func() bool {
		before = overview()
		var err error
		page, err = b.Values(5 * time.Second)
		if err != nil {
			t.Fatalf("reading the page: %v", err)
		}
		after = overview()
		// Midnight between the reads would restart today's cost: read again.
		sameDay := before.Cost.From.Equal(after.Cost.From)
		return sameDay && quiet(before) && quiet(after) && len(dashboardDiffs(page, before)) == 0 && len(dashboardDiffs(page, after)) == 0 &&
			costAgrees(page, after)
	})
	if d := dashboardDiffs(page, after); len(d) > 0 {
		t.Errorf("the page differs from GET /api/v1/overview: %v", d)
	}
	pageAt, err := time.Parse(time.RFC3339Nano, page["at"])
	if err != nil {
		t.Fatalf("the page's time %q: %v", page["at"], err)
	}
	rate := costRate(after)
	if rate != 3 {
		t.Errorf("cost rate %v per hour, want 2 slots × 1.5", rate)
	}
	total := pageFloat(t, page, "cost.total")
	want := after.Cost.Total + rate*pageAt.Sub(after.At).Hours()
	if !costAgrees(page, after) || total <= 0 {
		t.Errorf("cost.total on the page %v at %s; the API said %v at %s, so want %v (or the API's own, from one cost worked out for both)",
			total, pageAt.Format(time.StampMilli), after.Cost.Total, after.At.Format(time.StampMilli), want)
	}
	if n := page["running.count"]; n != "0" {
		t.Errorf("running.count %s in a quiet state", n)
	}

	// A job submitted now shows up without a reload: a marker set on the
	// window survives only if the page is not loaded again.
	if _, err := browser.Eval[bool](b, `window.e2eNoReload = true`, time.Second); err != nil {
		t.Fatal(err)
	}
	submitted := time.Now()
	// It sleeps longer than the wait below, so it is still running when
	// the page is read.
	id := r.submitSleep("dash-sleep", jobs.ClassCore, 8)
	key := "running." + id + ".pool"
	if err := b.WaitFor(fmt.Sprintf(`document.querySelector('[data-k=%q]') !== null`, key), 6*time.Second); err != nil {
		t.Fatalf("job %s not on the page: %v (state %s)", id, err, r.job(id).State)
	}
	t.Logf("job on the page %s after submit", time.Since(submitted).Round(time.Millisecond))
	if ok, _ := browser.Eval[bool](b, `window.e2eNoReload === true`, time.Second); !ok {
		t.Errorf("the page was loaded again")
	}
	page, err = b.Values(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var apiPool string
	for _, j := range overview().Running {
		if j.ID == id {
			apiPool = j.Pool
		}
	}
	if apiPool == "" {
		t.Fatalf("GET /api/v1/overview does not list job %s as running", id)
	}
	if got := page[key]; got != apiPool {
		t.Errorf("the page shows job %s on pool %q, the API on %q", id, got, apiPool)
	}
	if got := page["running."+id+".template"]; got != "hy-sleep" {
		t.Errorf("the page shows job %s as template %q, want hy-sleep", id, got)
	}
	count, _ := browser.Eval[string](b, `document.getElementById('running').dataset.count`, time.Second)
	if count != "1" {
		t.Errorf("running tbody data-count %q, want 1", count)
	}

	// The jobs console reads the real API too: the job is in its list,
	// and its link opens its page with the record.
	row := fmt.Sprintf(`document.querySelector('a[data-k=%q]')`, "jobs."+id+".id")
	if err := b.WaitFor(row+` !== null`, 10*time.Second); err != nil {
		t.Fatalf("job %s not in the jobs list: %v", id, err)
	}
	if _, err := browser.Eval[bool](b, row+`.click() === undefined`, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(`(document.querySelector('[data-k="job.template"]') || {}).textContent === 'hy-sleep'`, 10*time.Second); err != nil {
		t.Fatalf("the job's page did not show job %s: %v", id, err)
	}

	// Back to the overview, the long page, for the screenshot.
	if _, err := browser.Eval[bool](b, `(() => { location.hash = 'view=overview'; return true; })()`, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(`document.body.dataset.view === 'overview'`, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	shot, err := b.Screenshot(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dashboard.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if sz := img.Bounds().Size(); sz.X != 1400 || sz.Y < 900 {
		t.Errorf("the screenshot is %v, want 1400 wide and at least 900 high", sz)
	}

	// `ballast-tools screenshot` does the same from the command line, with
	// the token from the environment as an operator would give it.
	cmdShot := filepath.Join(t.TempDir(), "cmd.png")
	tools := toolsBinary(t)
	cmd := exec.Command(tools, "screenshot", "--api", api, "-o", cmdShot, "--width", "1200", "--height", "800")
	cmd.Env = append(os.Environ(), "BALLAST_API_TOKEN="+token)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr // notices, such as no config file found; stdout is the path alone
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ballast-tools screenshot: %v\n%s%s", err, out, stderr.Bytes())
	}
	if got := strings.TrimSpace(string(out)); got != cmdShot {
		t.Errorf("ballast-tools screenshot printed %q, want the path %s", got, cmdShot)
	}
	f, err := os.Open(cmdShot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfgImg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatalf("ballast-tools screenshot wrote no PNG: %v", err)
	}
	if cfgImg.Width != 1200 || cfgImg.Height < 800 {
		t.Errorf("ballast-tools screenshot wrote %dx%d, want 1200 wide and at least 800 high", cfgImg.Width, cfgImg.Height)
	}

	// --page captures any console page: the job's, once it has drawn.
	jobShot := filepath.Join(t.TempDir(), "job.png")
	cmd = exec.Command(tools, "screenshot", "--api", api, "--page", "job="+id, "-o", jobShot)
	cmd.Env = append(os.Environ(), "BALLAST_API_TOKEN="+token)
	stderr.Reset()
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil || strings.TrimSpace(string(out)) != jobShot {
		t.Fatalf("ballast-tools screenshot --page job=%s: %v\n%s%s", id, err, out, stderr.Bytes())
	}
	if data, err := os.ReadFile(jobShot); err != nil {
		t.Fatal(err)
	} else if _, err := png.Decode(bytes.NewReader(data)); err != nil {
		t.Errorf("--page wrote no PNG: %v", err)
	}
	cmd = exec.Command(tools, "screenshot", "--api", api, "--page", "run=nope", "--timeout", "5s", "-o", filepath.Join(t.TempDir(), "x.png"))
	cmd.Env = append(os.Environ(), "BALLAST_API_TOKEN="+token)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "did not draw") {
		t.Errorf("a page that cannot draw: %v\n%s", err, out)
	}
}

// apiAddress reads the API's base URL from the controller's start line
// (it listens on a free port).
func apiAddress(t *testing.T, c *child) string {
	t.Helper()
	re := regexp.MustCompile(`HTTP API on (http://\S+)`)
	var url string
	testenv.Eventually(t, 15*time.Second, "the controller's HTTP API address", func() bool {
		if c.exited() {
			t.Fatalf("the controller exited:\n%s", c.log())
		}
		if m := re.FindStringSubmatch(c.log()); m != nil {
			url = m[1]
			return true
		}
		return false
	})
	return url
}

func poolOf(o insight.Overview, name string) *insight.PoolView {
	for i := range o.Pools {
		if o.Pools[i].Name == name {
			return &o.Pools[i]
		}
	}
	return nil
}

// costRate is what o's pools cost per hour together.
func costRate(o insight.Overview) float64 {
	rate := 0.0
	for _, p := range o.Pools {
		rate += p.CostPerHour
	}
	return rate
}

func pageFloat(t *testing.T, page map[string]string, key string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(page[key], 64)
	if err != nil {
		t.Fatalf("%s on the page: %q", key, page[key])
	}
	return v
}

// dashboardDiffs lists the numbers that do not move in a quiet state and
// that the page shows differently from o: each pool's capacity, price
// and cost rate, each queue's backlog, the leader. Numbers compare
// exactly: the page keeps each JSON value in data-v.
func dashboardDiffs(page map[string]string, o insight.Overview) []string {
	want := map[string]string{"leader": o.Leader,
		"redis": o.Redis.Mode + " · " + strings.Join(o.Redis.Masters, ", "), "provider": o.Engines.Provider,
		"nats": fmt.Sprintf("%d server%s · stream ×%d", len(o.Engines.NATS), map[bool]string{true: "", false: "s"}[len(o.Engines.NATS) == 1],
			o.Engines.StreamReplicas)}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, p := range o.Pools {
		k := "pool." + p.Name + "."
		want[k+"busy"] = strconv.Itoa(p.Busy)
		want[k+"idle"] = strconv.Itoa(p.Idle)
		want[k+"workers"] = strconv.Itoa(p.Workers)
		want[k+"draining"] = strconv.Itoa(p.Draining)
		want[k+"quota"] = strconv.Itoa(p.Quota)
		want[k+"price_per_slot_hour"] = f(p.PricePerSlotHour)
		want[k+"cost_per_hour"] = f(p.CostPerHour)
	}
	for _, q := range o.Queues {
		want["queue."+q.Name+".pending"] = strconv.Itoa(q.Pending)
		want["queue."+q.Name+".running"] = strconv.Itoa(q.Running)
	}
	for _, w := range o.Workers {
		want["worker."+w.ID+".busy"] = strconv.Itoa(w.Busy)
		want["worker."+w.ID+".slots"] = strconv.Itoa(w.Slots)
	}
	var diffs []string
	for k, v := range want {
		got, ok := page[k]
		if !ok {
			got = "(missing)"
		}
		if got != v {
			diffs = append(diffs, fmt.Sprintf("%s: page %s, API %s", k, got, v))
		}
	}
	return diffs
}

// toolsBinary builds cmd/ballast-tools, where the screenshot command lives
// (it is kept out of the production binary), for the one test that runs it.
func toolsBinary(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "ballast-tools")
	cmd := exec.Command("go", "build", "-ldflags=-s -w", "-o", bin, "./cmd/ballast-tools")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(out)))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building ballast-tools: %v\n%s", err, b)
	}
	return bin
}

// startChromium starts the headless browser the console tests drive,
// closed when the test ends; without -short and without Chromium the
// test fails under CI and is skipped elsewhere.
func startChromium(t *testing.T) *browser.Browser {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the ballast binary and Chromium")
	}
	b, err := browser.Start(context.Background(), browser.Options{Width: 1400, Height: 900})
	if errors.Is(err, browser.ErrNotFound) {
		testenv.Unavailable(t, "Chromium", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}
