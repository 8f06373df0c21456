package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/sweep"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/flows"
)

func (f flowEnv) sweeps(t *testing.T) *controller.Sweeps {
	t.Helper()
	cat, sub := f.submitter(t)
	sw, err := controller.NewSweeps(controller.SweepsOptions{Sweeps: f.flows, Jobs: f.store, Submitter: sub, Catalog: cat, Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	return sw
}

// lrSweep is a sweep of the trial template over lr = 0.1, 0.2, ...
func lrSweep(n int) sweep.Spec {
	s := sweep.Spec{Template: "trial", Metric: "loss"}
	for i := 0; i < n; i++ {
		s.Space.List = append(s.Space.List, map[string]json.RawMessage{"lr": json.RawMessage(fmt.Sprintf("%g", float64(i+1)/10))})
	}
	return s
}

// endTrial runs a trial's job as a worker would: claim it, report metric
// (unless nil), and finish it in state.
func (f flowEnv) endTrial(t *testing.T, job string, metric *float64, state jobs.State) {
	t.Helper()
	ctx := context.Background()
	j, ok, err := f.store.Claim(ctx, queues.Delivery{JobID: job, Attempt: 1}, "w")
	if err != nil || !ok {
		t.Fatalf("claim %s: ok=%v err=%v", job, ok, err)
	}
	if metric != nil {
		if ok, err := f.store.ReportMetric(ctx, j, "w", *metric); err != nil || !ok {
			t.Fatalf("report %s: ok=%v err=%v", job, ok, err)
		}
	}
	code := 0
	if state != jobs.StateSucceeded {
		code = 1
	}
	if ok, err := f.store.Finish(ctx, j, "w", state, &code, ""); err != nil || !ok {
		t.Fatalf("finish %s: ok=%v err=%v", job, ok, err)
	}
}

func ptr(v float64) *float64 { return &v }

func TestSweepShowListAndCancel(t *testing.T) {
	f := newFlowEnv(t, unreachableNATS)
	ctx := context.Background()
	rc, err := f.sweeps(t).SubmitSweep(ctx, lrSweep(4))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := f.flows.GetSweep(ctx, rc.SweepID)
	if err != nil || len(rec.Trials) != 4 {
		t.Fatalf("sweep record %+v %v", rec, err)
	}
	// Trial 1 is best (lowest loss); trial 3 stays queued.
	f.endTrial(t, rec.Trials[0], ptr(0.9), jobs.StateSucceeded)
	f.endTrial(t, rec.Trials[1], ptr(0.3), jobs.StateSucceeded)
	f.endTrial(t, rec.Trials[2], ptr(0.5), jobs.StateSucceeded)

	out := runOK(t, "sweep", "show", rc.SweepID, "--config", f.path)
	for _, want := range []string{"running", "trial", "loss (minimize)", "3/4 done: 1 queued, 3 succeeded",
		"trial 1, loss 0.3, job " + rec.Trials[1], "best lr", "0.2"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	// Trials best metric first, the one without a metric last.
	var order []string
	for _, l := range strings.Split(out[strings.Index(out, "TRIAL"):], "\n")[1:] {
		if fields := strings.Fields(l); len(fields) == 4 {
			order = append(order, fields[0]+"="+fields[2])
		}
	}
	if got := strings.Join(order, " "); got != "1=0.3 2=0.5 0=0.9 3=-" {
		t.Errorf("trial order %q, want 1=0.3 2=0.5 0=0.9 3=-\n%s", got, out)
	}
	out = runOK(t, "sweep", "show", rc.SweepID, "--trials", "2", "--config", f.path)
	if !strings.Contains(out, "and 2 more trials") || strings.Contains(out, rec.Trials[3]) {
		t.Errorf("--trials 2 shows more than two trials:\n%s", out)
	}
	var v controller.SweepView
	if err := json.Unmarshal([]byte(runOK(t, "sweep", "show", "-o", "json", rc.SweepID, "--config", f.path)), &v); err != nil {
		t.Fatal(err)
	}
	if v.Sweep.ID != rc.SweepID || len(v.Trials) != 4 || v.Summary.Best == nil || v.Summary.Best.Index != 1 || v.BestJob != rec.Trials[1] {
		t.Fatalf("show -o json: %+v", v)
	}

	out = runOK(t, "sweep", "list", "--config", f.path)
	row, ok := lineWith(out, rc.SweepID)
	if !ok {
		t.Fatalf("list lacks the sweep:\n%s", out)
	}
	if fields := strings.Fields(row); len(fields) < 7 || fields[1] != "trial" || fields[2] != "running" || fields[3] != "4" ||
		fields[4] != "3" || fields[5] != "0.3" {
		t.Errorf("list row %q: want template trial, running, 4 trials, 3 done, best 0.3", row)
	}

	out = runOK(t, "sweep", "cancel", rc.SweepID, "--config", f.path)
	if !strings.Contains(out, "cancelled") || !strings.Contains(out, "SIGTERM within a heartbeat") {
		t.Errorf("cancel output:\n%s", out)
	}
	if rec, _ := f.flows.GetSweep(ctx, rc.SweepID); rec.State != flows.SweepCancelled {
		t.Fatalf("sweep state after cancel: %s", rec.State)
	}
	if j, err := f.store.Get(ctx, rec.Trials[3]); err != nil || j.State != jobs.StateCancelled {
		t.Fatalf("queued trial after cancel: %s %v", j.State, err)
	}
	if out := runOK(t, "sweep", "cancel", rc.SweepID, "--config", f.path); !strings.Contains(out, "already ended (cancelled)") {
		t.Errorf("second cancel:\n%s", out)
	}
	if code, _, errOut := run(t, "sweep", "cancel", "nosuchsweep", "--config", f.path); code != 1 || !strings.Contains(errOut, "no sweep nosuchsweep") {
		t.Errorf("cancel of an unknown sweep: code %d, stderr %q", code, errOut)
	}
	if code, out, _ := run(t, "sweep"); code != 0 || !strings.Contains(out, "submit FILE") || !strings.Contains(out, "list") {
		t.Errorf("sweep without a verb: code %d\n%s", code, out)
	}
	if code, _, errOut := run(t, "sweep", "frob"); code != 2 || !strings.Contains(errOut, "cancel ID") {
		t.Errorf("sweep frob: code %d, stderr %q", code, errOut)
	}
}

func TestRankTrialsFollowsTheGoal(t *testing.T) {
	trials := []sweep.TrialStatus{{Index: 0}, {Index: 1, Metric: ptr(0.2)}, {Index: 2, Metric: ptr(0.7)}, {Index: 3, Metric: ptr(0.2)}}
	order := func(ts []sweep.TrialStatus) (s string) {
		for _, tr := range ts {
			s += fmt.Sprint(tr.Index)
		}
		return s
	}
	if got := order(rankTrials(trials, sweep.Maximize)); got != "2130" {
		t.Errorf("maximize: %s, want 2130", got)
	}
	if got := order(rankTrials(trials, sweep.Minimize)); got != "1320" {
		t.Errorf("minimize: %s, want 1320", got)
	}
}

func TestSweepSubmitRefusesABadSpecWithoutNATS(t *testing.T) {
	f := newFlowEnv(t, unreachableNATS) // contacting NATS would fail with "cannot reach NATS"
	dir := t.TempDir()
	for _, c := range []struct{ body, field, msg string }{
		{`{"template":"trial","spaec":{"list":[{"lr":0.1}]}}`, "spaec", "unknown field"},
		{`{"template":7,"space":{"list":[{"lr":0.1}]}}`, "template", "must be a string"},
		{`{"template":"trial","space":{"grid":{"lr":[0.1]}},"max_parallel":"2"}`, "max_parallel", "must be an integer"},
		{``, "body", "empty message"},
	} {
		file := filepath.Join(dir, "spec.json")
		if err := os.WriteFile(file, []byte(c.body), 0o600); err != nil {
			t.Fatal(err)
		}
		code, _, errOut := run(t, "sweep", "submit", file, "--config", f.path)
		if code != 1 || !strings.Contains(errOut, c.field+": ") || !strings.Contains(errOut, c.msg) || !strings.Contains(errOut, "nothing was sent") {
			t.Errorf("%s: code %d, stderr %q; want field %s reported", c.body, code, errOut, c.field)
		}
		if strings.Contains(errOut, "cannot reach NATS") {
			t.Errorf("%s: NATS was contacted for a spec that does not decode: %q", c.body, errOut)
		}
	}
	if code, _, errOut := run(t, "sweep", "submit", filepath.Join(dir, "missing.json"), "--config", f.path); code != 1 || !strings.Contains(errOut, "missing.json") {
		t.Errorf("missing file: code %d, stderr %q", code, errOut)
	}
	if code, _, _ := run(t, "sweep", "submit", "--config", f.path); code != 2 {
		t.Errorf("no file: exit %d, want 2", code)
	}
}

// TestSweepSubmitWaitFollowsToTheEnd submits through a real NATS intake
// (reading the spec from stdin for the second sweep) and finishes the trials
// as workers would; --wait must succeed when a trial succeeded and fail
// when none did.
func TestSweepSubmitWaitFollowsToTheEnd(t *testing.T) {
	srv := testenv.NATS(t)
	f := newFlowEnv(t, srv.ClientURL())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, sub := f.submitter(t)
	in, err := intake.NewNATSServer(testenv.NATSConn(t, srv), sub, intake.NATSOptions{Subjects: subjects(f.cfg), Sweeps: f.sweeps(t), Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Stop)

	type result struct {
		code        int
		out, errOut string
	}
	submit := func(args ...string) <-chan result {
		ch := make(chan result, 1)
		go func() {
			var out, errOut bytes.Buffer
			code := Run(ctx, append([]string{"sweep", "submit", "--wait", "--config", f.path}, args...), &out, &errOut)
			ch <- result{code, out.String(), errOut.String()}
		}()
		return ch
	}
	// trials waits for the newest sweep other than skip to have n enqueued trials.
	trials := func(skip string, n int) flows.SweepRecord {
		t.Helper()
		var rec flows.SweepRecord
		testenv.Eventually(t, 10*time.Second, "the submitted sweep's trials", func() bool {
			ids, err := f.flows.ListSweeps(ctx, 1)
			if err != nil || len(ids) == 0 || ids[0] == skip {
				return false
			}
			rec, err = f.flows.GetSweep(ctx, ids[0])
			return err == nil && len(rec.Trials) == n
		})
		return rec
	}
	finish := func(ch <-chan result) result {
		t.Helper()
		select {
		case r := <-ch:
			return r
		case <-time.After(20 * time.Second):
			t.Fatal("sweep submit --wait did not return after every trial ended")
		}
		return result{}
	}

	spec, _ := json.Marshal(lrSweep(2))
	file := filepath.Join(t.TempDir(), "sweep.json")
	if err := os.WriteFile(file, spec, 0o600); err != nil {
		t.Fatal(err)
	}
	done := submit(file)
	rec := trials("", 2)
	f.endTrial(t, rec.Trials[0], ptr(0.25), jobs.StateSucceeded)
	f.endTrial(t, rec.Trials[1], ptr(0.1), jobs.StateFailed)
	r := finish(done)
	if r.code != 0 {
		t.Fatalf("a sweep with a succeeded trial: exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	for _, want := range []string{fmt.Sprintf("sweep %s: 2 trials, 2 queued", rec.ID), "2/2 done: 1 succeeded, 1 failed",
		"trial 0, loss 0.25, job " + rec.Trials[0]} {
		if !strings.Contains(r.out, want) {
			t.Errorf("--wait output lacks %q:\n%s", want, r.out)
		}
	}

	// The second sweep comes from stdin, and none of its trials succeeds.
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin := os.Stdin
	os.Stdin = rd
	t.Cleanup(func() { os.Stdin = stdin })
	spec, _ = json.Marshal(lrSweep(1))
	wr.Write(spec)
	wr.Close()
	done = submit("-")
	rec2 := trials(rec.ID, 1)
	f.endTrial(t, rec2.Trials[0], nil, jobs.StateFailed)
	r = finish(done)
	if r.code != 1 || !strings.Contains(r.errOut, "no trial succeeded") || !strings.Contains(r.out, "sweep "+rec2.ID) {
		t.Fatalf("a sweep without a succeeded trial: exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
}
