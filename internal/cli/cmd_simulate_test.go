package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
	"github.com/ballastdev/ballast/queues"
	usagestore "github.com/ballastdev/ballast/queues/usage"
)

func TestTraceSimulateAndPlanOnASyntheticMonth(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "month.csv")
	code, _, errOut := run(t, "trace", "--synthetic", "400", "--seed", "7", "--out", csv)
	if code != 0 {
		t.Fatalf("trace: code %d: %s", code, errOut)
	}
	f, err := os.Open(csv)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.ReadCSV(f, csv)
	f.Close()
	if err != nil || len(tr.Jobs) < 300 {
		t.Fatalf("the written trace reads back as %d jobs: %v", len(tr.Jobs), err)
	}

	code, out, errOut := run(t, "simulate", "--trace", csv, "--elastic-max", "50", "--quota", "8")
	if code != 0 {
		t.Fatalf("simulate: code %d: %s", code, errOut)
	}
	for _, want := range []string{"all fixed (peak)", "all elastic", "hybrid 70/40", "hybrid tuned", "quota 8 slots"} {
		if !strings.Contains(out, want) {
			t.Errorf("simulate output lacks %q:\n%s", want, out)
		}
	}

	html := filepath.Join(dir, "plan.html")
	code, out, errOut = run(t, "plan", "--trace", csv, "--elastic-max", "50", "--html", html, "--tune-days", "7")
	if code != 0 {
		t.Fatalf("plan: code %d: %s", code, errOut)
	}
	for _, want := range []string{"rule of thumb", "cost-optimal", "simulated", "TEMPLATE"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan output lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(html)
	if err != nil || strings.Count(string(b), "<svg") != 3 {
		t.Fatalf("the HTML report: %d charts, err %v", strings.Count(string(b), "<svg"), err)
	}

	if code, _, errOut := run(t, "simulate", "--trace", csv, "--synthetic", "10"); code != 2 || !strings.Contains(errOut, "exactly one trace") {
		t.Fatalf("two trace sources: code %d: %s", code, errOut)
	}
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("submit_s,duration_s,slots,class,team,template,checkpointable,deadline_s\n1,0,1,core,a,b,false,\n"), 0o600)
	if code, _, errOut := run(t, "simulate", "--trace", bad); code != 1 || !strings.Contains(errOut, "line 2") {
		t.Fatalf("a bad trace: code %d: %s", code, errOut)
	}
}

// TestTraceFromHistory: finished jobs in Redis become a trace with their
// class, template and run time; queued ones are left out.
func TestTraceFromHistory(t *testing.T) {
	f := newFlowEnv(t, unreachableNATS)
	ctx := context.Background()
	_, sub := f.submitter(t)
	var ids []string
	for i, tmpl := range []string{"features", "trial", "upload"} {
		params := map[string]json.RawMessage{}
		switch tmpl {
		case "features":
			params["date"] = json.RawMessage(`"d"`)
		case "trial":
			params["lr"] = json.RawMessage(`0.1`)
		}
		rc, err := sub.Submit(ctx, jobs.Submission{Template: tmpl, Params: params, IdempotencyKey: fmt.Sprint("h", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rc.JobID)
	}
	for _, id := range ids[:2] { // the third stays queued
		j, ok, err := f.store.Claim(ctx, queues.Delivery{JobID: id, Attempt: 1}, "w")
		if err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
		time.Sleep(20 * time.Millisecond)
		code := 0
		if _, err := f.store.Finish(ctx, j, "w", jobs.StateSucceeded, &code, ""); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "history.csv")
	if code, _, errOut := run(t, "trace", "--config", f.path, "--history", "1h", "--out", out); code != 0 {
		t.Fatalf("trace --history: code %d: %s", code, errOut)
	}
	file, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	tr, err := trace.ReadCSV(file, out)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Jobs) != 2 {
		t.Fatalf("%d jobs in the history trace, want the 2 finished ones", len(tr.Jobs))
	}
	classes := map[string]jobs.Class{}
	for _, j := range tr.Jobs {
		classes[j.Template] = j.Class
		if j.Duration < 20*time.Millisecond || j.Duration > 5*time.Second {
			t.Errorf("%s ran %s", j.Template, j.Duration)
		}
	}
	if classes["features"] != jobs.ClassCore || classes["trial"] != jobs.ClassBurst {
		t.Fatalf("classes %v", classes)
	}
}

func TestStatusShowsPoolsAndTheQuotasIdleShare(t *testing.T) {
	f := newFlowEnv(t, unreachableNATS)
	ctx := context.Background()
	if _, err := f.store.Heartbeat(ctx, queues.WorkerInfo{ID: "fx-1", Pool: "fixed", Slots: 2, Busy: 1}, nil); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "status", "--config", f.path)
	if code != 0 {
		t.Fatalf("status: code %d: %s", code, errOut)
	}
	for _, want := range []string{"POOL", "fixed quota idle now: 50%"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}

// TestAdviseReadsTheWindow: a quota idle half the time over the last day
// (samples as the leader records them) gets the fixed-idle advice; an empty
// history with a balanced idle share gets none.
func TestAdviseReadsTheWindow(t *testing.T) {
	f := newFlowEnv(t, unreachableNATS)
	ctx := context.Background()
	// The same install with prices, so the advisor has a break-even.
	b, err := os.ReadFile(f.path)
	if err != nil {
		t.Fatal(err)
	}
	priced := strings.Replace(string(b), "  fixed: {kind: fixed, slots: 2}",
		"  fixed: {kind: fixed, slots: 2, price_per_slot_hour: 1}\n  ondemand: {kind: ondemand, price_per_slot_hour: 2.5, max_workers: 2}", 1)
	if priced == string(b) {
		t.Fatal("the test config's pools line changed; update this test")
	}
	if err := os.WriteFile(f.path, []byte(priced), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i := 0; i < 60; i++ {
		if err := usagestore.New(f.store).RecordSample(ctx, "fixed_idle", now.Add(-time.Duration(i)*time.Minute), 0.2, 24*time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if code, out, errOut := run(t, "advise", "--config", f.path, "--window", "2h"); code != 0 || !strings.Contains(out, "nothing to change") {
		t.Fatalf("balanced: code %d out %q err %q", code, out, errOut)
	}
	for i := 0; i < 60; i++ {
		if err := usagestore.New(f.store).RecordSample(ctx, "fixed_idle", now.Add(-time.Duration(i)*time.Minute-30*time.Second), 0.8, 24*time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := run(t, "advise", "--config", f.path, "--window", "2h")
	if code != 0 || !strings.Contains(out, "idle") {
		t.Fatalf("idle quota: code %d out %q err %q", code, out, errOut)
	}
}

func TestUntilCancelledReturnsWhenAsked(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	block := make(chan struct{})
	defer close(block)
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	start := time.Now()
	_, err := untilCancelled(ctx, func() (int, error) { <-block; return 1, nil })
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("err %v after %s", err, time.Since(start))
	}
	if v, err := untilCancelled(context.Background(), func() (int, error) { return 7, nil }); v != 7 || err != nil {
		t.Fatalf("a finished run: %d %v", v, err)
	}
}
