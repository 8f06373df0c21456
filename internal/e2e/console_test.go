package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/internal/tools/browser"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/pipeline"
)

// consoleShots is where TestConsole writes a screenshot of each page it
// opens: $BALLAST_CONSOLE_SHOTS when set (to look at them afterwards),
// else a temporary directory.
func consoleShots(t *testing.T) string {
	if d := os.Getenv("BALLAST_CONSOLE_SHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// TestConsole drives the web console in one headless Chromium through a
// real `ballast controller` (with an API token, a pipeline and the
// capacity policy) and a real fixed worker: a job is in the list and the
// filters narrow it; its page shows its attempts and its output growing
// live; cancel from the page cancels it; retry from the page makes a new
// job; a sweep's page shows the best trial the API computes, drawn on its
// chart; a pipeline triggered from the page shows each step's state on
// its DAG; and a write forged outside the page is refused.
func TestConsole(t *testing.T) {
	b := startChromium(t)
	shots := consoleShots(t)
	shot := func(name string) {
		t.Helper()
		// A page drawn but not shown (a section left hidden) reads right
		// and looks empty: the screenshot is of something visible.
		if h, _ := browser.Eval[float64](b, `document.querySelector('main').getBoundingClientRect().height`, time.Second); h < 100 {
			t.Errorf("page %s: the console shows nothing (main is %.0f px high)", name, h)
		}
		png, err := b.Screenshot(15 * time.Second)
		if err != nil {
			t.Errorf("screenshot %s: %v", name, err)
			return
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644); err != nil {
			t.Error(err)
		}
	}

	r := newHybridRig(t, map[string]config.PoolConfig{
		"fixed": {Kind: config.PoolFixed, Slots: 3, PricePerSlotHour: 1.5},
	}, 1.0, 0.4)
	marks := filepath.Join(r.dir, "marks")
	step := func(deps ...string) pipeline.Step {
		return pipeline.Step{Template: "hy-mark", Params: map[string]any{"record": marks, "seconds": 0.3}, DependsOn: deps}
	}
	r.cfg.Pipelines = map[string]pipeline.Pipeline{"nightly": {Schedule: "0 3 1 1 *", Steps: map[string]pipeline.Step{
		"extract": step(), "transform": step("extract"), "report": step("extract"), "load": step("transform"),
	}}, "slow": {Schedule: "0 3 1 1 *", Steps: map[string]pipeline.Step{
		"wait": {Template: "hy-mark", Params: map[string]any{"record": marks, "seconds": 60.0}}, "after": step("wait"),
	}}}
	const token = "console-e2e-token"
	r.cfg.HTTP.APIToken = token
	r.saveConfig()
	r.startFixedWorker("fixed-1", 3)
	ctl := r.startBallast("ctl", "controller", "--config", r.cfgPath, "--provider", "none")
	api := apiAddress(t, ctl)
	hc := &http.Client{Timeout: 5 * time.Second}
	call := func(method, path string, body io.Reader, out any) int {
		t.Helper()
		req, _ := http.NewRequest(method, api+path, body)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		res, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		if out != nil {
			_ = json.NewDecoder(res.Body).Decode(out)
		}
		return res.StatusCode
	}
	testenv.Eventually(t, 20*time.Second, "the controller leading", func() bool {
		if ctl.exited() {
			t.Fatalf("the controller exited:\n%s", ctl.log())
		}
		var st struct {
			Leader string `json:"leader"`
		}
		return call("GET", "/api/v1/status", nil, &st) == 200 && st.Leader != ""
	})
	if status, err := b.Open(api+"/dashboard?token="+token+"#view=jobs", 15*time.Second); err != nil || status != http.StatusOK {
		t.Fatalf("signing in: %d %v\n%s", status, err, ctl.log())
	}
	eval := func(js string) {
		t.Helper()
		if _, err := browser.Eval[bool](b, "(() => { "+js+"; return true; })()", 5*time.Second); err != nil {
			t.Fatalf("%s: %v", js, err)
		}
	}
	text := func(k string) string {
		v, _ := browser.Eval[string](b, fmt.Sprintf(`((document.querySelector('[data-k=%q]') || {}).textContent || '')`, k), 5*time.Second)
		return v
	}
	wait := func(what, js string, within time.Duration) {
		t.Helper()
		if err := b.WaitFor(js, within); err != nil {
			t.Fatalf("%s: %v\ncontroller log tail:\n%s", what, err, tail(ctl.log(), 3000))
		}
	}
	// open follows a link to the page, as a person does.
	open := func(frag string) {
		t.Helper()
		eval(fmt.Sprintf("const a = document.createElement('a'); a.href = %q; document.body.append(a); a.click(); a.remove()", "#"+frag))
	}
	// The page's confirm dialogs would stop headless Chromium: say yes.
	eval("window.confirm = () => true")

	// ---- the list and its filters -------------------------------------
	long, _ := r.submitSteps("console-long", 600) // 60 s of steps, printing a line each
	short := r.submitSleep("console-short", jobs.ClassCore, 0.2)
	testenv.Eventually(t, 20*time.Second, "the short job succeeding and the long one running", func() bool {
		return r.job(short).State == jobs.StateSucceeded && r.job(long).State == jobs.StateRunning
	})
	row := func(id string) string { return fmt.Sprintf(`document.querySelector('#jobs tr[data-job=%q]')`, id) }
	wait("both jobs in the list", row(long)+" && "+row(short), 10*time.Second)
	setFilter := func(id, v string) {
		t.Helper()
		eval(fmt.Sprintf(`const e = document.getElementById(%q); e.value = %q; e.dispatchEvent(new Event(e.tagName === 'SELECT' ? 'change' : 'input'))`, id, v))
	}
	setFilter("f-template", "hy-sleep")
	wait("the template filter narrowing the list to the short job", row(short)+" && !"+row(long), 10*time.Second)
	setFilter("f-template", "")
	setFilter("f-state", "running")
	wait("the state filter keeping only the running job", row(long)+" && !"+row(short), 10*time.Second)
	setFilter("f-state", "")
	setFilter("f-id", short[:14])
	wait("the ID prefix finding the short job", row(short)+" && !"+row(long), 10*time.Second)
	setFilter("f-id", "")
	setFilter("f-class", "burst")
	wait("the class filter keeping the burst job", row(long)+" && !"+row(short), 10*time.Second)
	if h, _ := browser.Eval[string](b, "location.hash", time.Second); !strings.Contains(h, "f.class=burst") {
		t.Errorf("the filter is not kept in the address: %s", h)
	}
	shot("jobs-filtered")
	setFilter("f-class", "")

	// ---- a running job's page: attempts and live output -----------------
	open("job=" + long)
	wait("the long job's page with its attempts", `Number(document.getElementById('job-attempts').dataset.count) >= 1 && document.querySelector('[data-k="job.runs"]')`, 10*time.Second)
	lines := func() int {
		n, _ := browser.Eval[int](b, `Number(document.getElementById('job-logs').dataset.lines || 0)`, time.Second)
		return n
	}
	wait("output on the page", `Number(document.getElementById('job-logs').dataset.lines) >= 3`, 15*time.Second)
	first := lines()
	eval("window.e2eNoReload = true")
	wait("the output growing without a reload", fmt.Sprintf(`Number(document.getElementById('job-logs').dataset.lines) >= %d && window.e2eNoReload`, first+5), 15*time.Second)
	if out, _ := browser.Eval[string](b, `document.getElementById('job-logs').textContent`, time.Second); !strings.Contains(out, "step 1/600") {
		t.Errorf("the output does not show the job's lines: %.200q", out)
	}
	var att struct {
		Runs, Deliveries int
		Attempts         []struct {
			Attempt               int
			Ran                   bool
			Pool, Worker, Outcome string
			Began                 string
		}
	}
	if code := call("GET", "/api/v1/jobs/"+long+"/attempts", nil, &att); code != 200 || len(att.Attempts) == 0 {
		t.Fatalf("GET attempts: %d %+v", code, att)
	}
	last := att.Attempts[len(att.Attempts)-1]
	if !last.Ran || last.Pool != "fixed" || last.Worker != "fixed-1" || last.Outcome != "running" || att.Runs != 1 {
		t.Errorf("the running attempt %+v, runs %d", last, att.Runs)
	}
	// A burst job with only fixed capacity runs by being lent: its first
	// delivery never ran, and the controller's job.moved event says why.
	if att.Deliveries < 2 || att.Attempts[0].Ran || att.Attempts[0].Outcome != "moved" || text("attempt.1.outcome") != "moved" {
		t.Errorf("attempt 1 of %d deliveries: %+v, shown %q", att.Deliveries, att.Attempts[0], text("attempt.1.outcome"))
	}
	for i, a := range att.Attempts[:len(att.Attempts)-1] {
		if !a.Ran && !strings.HasPrefix(att.Attempts[i+1].Began, "moved: lent to fixed capacity (rule 2") {
			t.Errorf("attempt %d began %q, want the lend's reason", i+2, att.Attempts[i+1].Began)
		}
	}
	n := len(att.Attempts)
	for k, want := range map[string]string{
		fmt.Sprintf("attempt.%d.pool", n): "fixed", fmt.Sprintf("attempt.%d.worker", n): "fixed-1",
		fmt.Sprintf("attempt.%d.outcome", n): "running", "job.runs": "1", "job.deliveries": fmt.Sprint(att.Deliveries),
	} {
		if got := text(k); got != want {
			t.Errorf("%s on the page %q, want %q", k, got, want)
		}
	}
	t.Logf("the long job: %d runs, %d deliveries; attempt 1 began %q", att.Runs, att.Deliveries, att.Attempts[0].Began)
	shot("job-running")

	// ---- a forged write is refused ---------------------------------------
	jar, _ := cookiejar.New(nil)
	forger := &http.Client{Jar: jar, Timeout: 5 * time.Second}
	if res, err := forger.Get(api + "/dashboard?token=" + token); err != nil {
		t.Fatal(err)
	} else {
		res.Body.Close()
	}
	u, _ := url.Parse(api)
	if len(jar.Cookies(u)) == 0 {
		t.Fatal("signing in gave no session cookie")
	}
	for _, h := range []map[string]string{nil, {"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}, {"X-Ballast-CSRF": strings.Repeat("ab", 32)}} {
		req, _ := http.NewRequest("POST", api+"/api/v1/jobs/"+long+"/cancel", nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		res, err := forger.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("a forged cancel with the session cookie and %v: %d, want 403", h, res.StatusCode)
		}
	}
	if st := r.job(long).State; st != jobs.StateRunning || r.job(long).CancelRequested {
		t.Fatalf("a refused write changed the job: %s", st)
	}

	// ---- cancel from the page --------------------------------------------
	wait("the cancel button enabled", `!document.getElementById('job-cancel').disabled`, 5*time.Second)
	eval("document.getElementById('job-cancel').click()")
	testenv.Eventually(t, 20*time.Second, "the long job cancelled from the page", func() bool { return r.job(long).State == jobs.StateCancelled })
	wait("the page showing it cancelled", `(document.querySelector('[data-k="job.state"]') || {}).textContent === 'cancelled'`, 10*time.Second)

	// ---- retry from the page ---------------------------------------------
	open("job=" + short)
	wait("the short job's page", `(document.querySelector('[data-k="job.state"]') || {}).textContent === 'succeeded' && !document.getElementById('job-retry').disabled`, 10*time.Second)
	eval("document.getElementById('job-retry').click()")
	wait("the retry's new job named", `(document.getElementById('job-action').dataset.newJob || '') !== ''`, 10*time.Second)
	retried, _ := browser.Eval[string](b, `document.getElementById('job-action').dataset.newJob`, time.Second)
	if retried == short {
		t.Fatalf("retry gave the same job")
	}
	if j := r.job(retried); j.Spec.Labels[jobs.RetryOfLabel] != short || j.Spec.Template != "hy-sleep" || j.Spec.Params["seconds"] != 0.2 {
		t.Errorf("the retried job %+v", j.Spec)
	}
	testenv.Eventually(t, 20*time.Second, "the retried job succeeding", func() bool { return r.job(retried).State == jobs.StateSucceeded })
	eval("document.getElementById('job-new').click()")
	wait("the new job's page", fmt.Sprintf(`(document.querySelector('[data-k="job.retry_of"]') || {}).textContent === %q`, short), 10*time.Second)
	shot("job-retried")

	// ---- a sweep and its best trial --------------------------------------
	var sw struct {
		SweepID string `json:"sweep_id"`
	}
	body := `{"template":"hy-trial","space":{"grid":{"lr":[0.1,0.35,0.6,0.8],"layers":[3]}},"metric":"loss","goal":"minimize"}`
	if code := call("POST", "/api/v1/sweeps", strings.NewReader(body), &sw); code != http.StatusCreated || sw.SweepID == "" {
		t.Fatalf("POST /api/v1/sweeps: %d %+v", code, sw)
	}
	var view struct {
		Summary struct {
			Done bool
			Best *struct {
				Index  int
				Metric float64
			}
		}
		TrialParams []map[string]any `json:"trial_params"`
	}
	testenv.Eventually(t, 60*time.Second, "the sweep done", func() bool {
		return call("GET", "/api/v1/sweeps/"+sw.SweepID, nil, &view) == 200 && view.Summary.Done
	})
	if view.Summary.Best == nil || view.TrialParams[view.Summary.Best.Index]["lr"] != 0.35 {
		t.Fatalf("the API's best trial %+v of %v: want lr 0.35", view.Summary.Best, view.TrialParams)
	}
	open("sweep=" + sw.SweepID)
	wait("the sweep's page with its best trial", `(document.querySelector('[data-k="sweep.best.index"]') || {}).textContent !== '' && document.getElementById('sweep-chart').dataset.points === '4'`, 15*time.Second)
	if got := text("sweep.best.index"); got != fmt.Sprint(view.Summary.Best.Index) {
		t.Errorf("best trial on the page %q, the API's %d", got, view.Summary.Best.Index)
	}
	if got := text("sweep.best.params"); !strings.Contains(got, "lr=0.35") {
		t.Errorf("best trial's parameters on the page %q", got)
	}
	if best, _ := browser.Eval[string](b, `(document.querySelector('#sweep-chart circle.best') || {getAttribute: () => ''}).getAttribute('data-trial')`, time.Second); best != fmt.Sprint(view.Summary.Best.Index) {
		t.Errorf("the chart marks trial %q as best, want %d", best, view.Summary.Best.Index)
	}
	shot("sweep")
	open("view=sweeps")
	wait("the sweep in the list", fmt.Sprintf(`document.querySelector('#sweeps tr[data-sweep=%q]')`, sw.SweepID), 10*time.Second)
	if got := text("sweeps." + sw.SweepID + ".state"); got != "completed" {
		t.Errorf("the sweep's state in the list %q", got)
	}
	shot("sweeps")

	// ---- a pipeline triggered from the page ------------------------------
	open("view=pipelines")
	wait("the pipeline listed", `document.querySelector('button[data-trigger="nightly"]')`, 10*time.Second)
	shot("pipelines")
	eval(`document.querySelector('button[data-trigger="nightly"]').click()`)
	wait("the triggered run named", `(document.getElementById('pipelines-action').dataset.run || '') !== ''`, 10*time.Second)
	runID, _ := browser.Eval[string](b, `document.getElementById('pipelines-action').dataset.run`, time.Second)
	open("run=" + runID)
	wait("the run's DAG", `document.querySelectorAll('#run-dag g.node').length === 4`, 10*time.Second)
	var run struct {
		State string
		Steps map[string]struct{ State string }
	}
	testenv.Eventually(t, 60*time.Second, "the run succeeding", func() bool {
		return call("GET", "/api/v1/runs/"+runID, nil, &run) == 200 && run.State == "succeeded"
	})
	wait("the page showing every step succeeded", `Array.from(document.querySelectorAll('#run-dag g.node')).every((g) => g.dataset.state === 'succeeded') && (document.querySelector('[data-k="run.state"]') || {}).textContent === 'succeeded'`, 10*time.Second)
	for name, s := range run.Steps {
		if got := text("run.step." + name + ".state"); got != s.State {
			t.Errorf("step %s on the page %q, the API's %q", name, got, s.State)
		}
	}
	shot("run")

	// ---- cancelling a run and a sweep from their pages -------------------
	open("view=pipelines")
	wait("the slow pipeline listed", `document.querySelector('button[data-trigger="slow"]')`, 10*time.Second)
	eval(`document.getElementById('pipelines-action').dataset.run = ''; document.querySelector('button[data-trigger="slow"]').click()`)
	wait("the slow run named", `(document.getElementById('pipelines-action').dataset.run || '') !== ''`, 10*time.Second)
	slowRun, _ := browser.Eval[string](b, `document.getElementById('pipelines-action').dataset.run`, time.Second)
	open("run=" + slowRun)
	wait("the slow run's first step running", `(document.querySelector('#run-dag g.node[data-step="wait"]') || {dataset: {}}).dataset.state === 'running' && !document.getElementById('run-cancel').disabled`, 20*time.Second)
	eval("document.getElementById('run-cancel').click()")
	testenv.Eventually(t, 20*time.Second, "the slow run cancelled from the page", func() bool {
		return call("GET", "/api/v1/runs/"+slowRun, nil, &run) == 200 && run.State == "cancelled"
	})
	wait("the run's page showing it cancelled", `(document.querySelector('[data-k="run.state"]') || {}).textContent === 'cancelled'`, 10*time.Second)

	var slow struct {
		SweepID string `json:"sweep_id"`
	}
	body = `{"template":"hy-trial","space":{"grid":{"lr":[0.2,0.4],"layers":[3]}},"fixed":{"seconds":60},"metric":"loss"}`
	if code := call("POST", "/api/v1/sweeps", strings.NewReader(body), &slow); code != http.StatusCreated || slow.SweepID == "" {
		t.Fatalf("POST /api/v1/sweeps (slow): %d %+v", code, slow)
	}
	open("sweep=" + slow.SweepID)
	wait("the slow sweep's page with its cancel button", `!document.getElementById('sweep-cancel').disabled`, 15*time.Second)
	eval("document.getElementById('sweep-cancel').click()")
	var slowView struct {
		Sweep struct{ State string }
	}
	testenv.Eventually(t, 20*time.Second, "the slow sweep cancelled from the page", func() bool {
		return call("GET", "/api/v1/sweeps/"+slow.SweepID, nil, &slowView) == 200 && slowView.Sweep.State == "cancelled"
	})

	open("view=overview")
	wait("the overview drawn", `Number(document.body.dataset.updates || 0) >= 1`, 10*time.Second)
	shot("overview")
	t.Logf("screenshots in %s", shots)
}

// tail is the end of s, at most n bytes.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
