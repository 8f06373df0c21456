package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
)

// runningJob registers a fixed worker and gives it one job of team data.
func runningJob(t *testing.T, f flowEnv) string {
	t.Helper()
	ctx := context.Background()
	w := queues.WorkerInfo{ID: "fixed-w", Pool: "fixed", Slots: 2, StartedAt: time.Now().Add(-time.Minute)}
	if _, err := f.store.Heartbeat(ctx, w, nil); err != nil {
		t.Fatal(err)
	}
	sub, err := f.store.Submit(ctx, jobs.Spec{Template: "upload", Team: "data", Command: []string{"true"}, Class: jobs.ClassCore,
		Rhythm: jobs.RhythmPeriodic, Timeout: jobs.Duration(time.Hour), Grace: jobs.Duration(time.Second)}, queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := f.store.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, w.ID); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	return sub.Job.ID
}

func TestTopShowsTheOverview(t *testing.T) {
	f := newFlowEnv(t, unreachableNATS)
	id := runningJob(t, f)
	code, out, errOut := run(t, "top", "--config", f.path, "--once")
	if code != 0 {
		t.Fatalf("code %d err %q", code, errOut)
	}
	for _, want := range []string{"POOL", "fixed-w", id, "data", "upload", "QUEUE", "today: paid"} {
		if !strings.Contains(out, want) {
			t.Errorf("top does not show %q:\n%s", want, out)
		}
	}
	code, out, _ = run(t, "top", "--config", f.path, "-o", "json")
	var o insight.Overview
	if err := json.Unmarshal([]byte(out), &o); code != 0 || err != nil {
		t.Fatalf("json: code %d %v", code, err)
	}
	if len(o.Running) != 1 || o.Running[0].ID != id || o.Running[0].Pool != "fixed" || o.Pools[0].Busy != 1 {
		t.Fatalf("overview %+v", o)
	}
	if code, _, errOut := run(t, "top", "--config", f.path, "--every", "1ms"); code != 2 || !strings.Contains(errOut, "100ms or more") {
		t.Fatalf("--every 1ms: code %d %q", code, errOut)
	}
}

func TestCostPricesTheWindowAndRefusesBadFlags(t *testing.T) {
	f := newFlowEnv(t, unreachableNATS)
	runningJob(t, f)
	code, out, errOut := run(t, "cost", "--config", f.path, "--window", "1h", "--by", "team")
	if code != 0 || !strings.Contains(out, "data") || !strings.Contains(out, "paid ") {
		t.Fatalf("code %d out %q err %q", code, out, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--by", "colour"}, `--by "colour": use one of pool, team`},
		{[]string{"--from", "yesterday"}, "--from \"yesterday\": give an RFC 3339 time"},
		{[]string{"--window", "-1h"}, "give a positive duration"},
		{[]string{"--window", "2000h"}, "is before the oldest usage records kept"},
		{[]string{"--until", "2026-01-01T00:00:00Z"}, "is before the oldest usage records kept"},
	} {
		code, _, errOut := run(t, append([]string{"cost", "--config", f.path}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: code %d err %q, want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

// TestCostIsPricedFromBallastsStart: on an install two minutes old, a
// 24-hour window is priced from its start, and the table says so.
func TestCostIsPricedFromBallastsStart(t *testing.T) {
	f := newFlowEnv(t, unreachableNATS)
	start, err := f.store.MarkStarted(context.Background(), time.Now().Add(-2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "cost", "--config", f.path, "--window", "24h")
	if code != 0 || !strings.Contains(out, "priced from "+start.Format(time.RFC3339)) {
		t.Fatalf("code %d out %q err %q", code, out, errOut)
	}
	code, out, _ = run(t, "cost", "--config", f.path, "--window", "24h", "-o", "json")
	var got struct {
		Report struct{ From time.Time }
	}
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || !got.Report.From.Equal(start) {
		t.Fatalf("json: code %d %v from %s, want %s", code, err, got.Report.From, start)
	}
}
