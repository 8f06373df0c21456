package chaos

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// TestClassifyTellsAllowedDoublesFromBugs builds the cases by hand: a job
// done once; a job done again after a kill that came after its first
// side effect (allowed); the same but with the line written after the
// kill (a bug: a killed worker's job went on); a second side effect with
// no fault to explain it (a bug); a long and a short Redis pause; a worker
// frozen past worker_ttl (allowed); a job
// recorded succeeded with no line (lost), one still queued (lost), one
// failed, and a line of a job nobody submitted.
func TestClassifyTellsAllowedDoublesFromBugs(t *testing.T) {
	t0 := time.Now()
	ttl := 2 * time.Second
	ok := func(id string, attempt int) jobs.Job {
		return jobs.Job{ID: id, State: jobs.StateSucceeded, Attempt: attempt, FinishedAt: t0.Add(time.Minute)}
	}
	records := map[string]jobs.Job{
		"once": ok("once", 1), "killed": ok("killed", 2), "late": ok("late", 2), "unexplained": ok("unexplained", 2),
		"paused": ok("paused", 2), "short": ok("short", 2), "frozen": ok("frozen", 2), "twice": ok("twice", 1), "none": ok("none", 1),
		"queued":  {ID: "queued", State: jobs.StateQueued, Attempt: 3},
		"failed":  {ID: "failed", State: jobs.StateFailed, Attempt: 4, LastError: "exited with code 1"},
		"unknown": ok("unknown", 1),
	}
	ids := map[string]string{}
	for id := range records {
		if id != "unknown" {
			ids["k-"+id] = id
		}
	}
	var effects []effect
	line := func(job string, attempt int) {
		effects = append(effects, effect{job: job, attempt: attempt, seen: t0, index: len(effects)})
	}
	line("once", 1)
	line("killed", 1)
	line("paused", 1)
	line("short", 1)
	line("frozen", 1)
	// The kill strikes here: four lines are in the file.
	line("late", 1)
	line("unexplained", 1)
	line("twice", 1)
	line("twice", 1)
	for _, id := range []string{"killed", "late", "unexplained", "paused", "short", "frozen"} {
		line(id, 2)
	}
	line("unknown", 1)
	faults := []injected{
		{fault: FaultWorkerKill, target: "w1", effectsBefore: 5,
			running: map[attemptKey]bool{{"killed", 1}: true, {"late", 1}: true}},
		{fault: FaultRedisPause, lasted: 3 * time.Second, running: map[attemptKey]bool{{"paused", 1}: true}},
		{fault: FaultRedisPause, lasted: time.Second, running: map[attemptKey]bool{{"short", 1}: true}},
		{fault: FaultWorkerPause, target: "w2", lasted: 4 * time.Second, running: map[attemptKey]bool{{"frozen", 1}: true}},
	}
	got := classify(ids, records, effects, faults, ttl)
	want := tally{accepted: 11, succeeded: 9, once: 1, killedFirst: 1, pausedTTL: 2, doubled: 4, lost: 2, failed: 1, unknown: 1}
	if got.accepted != want.accepted || got.succeeded != want.succeeded || got.once != want.once ||
		got.killedFirst != want.killedFirst || got.pausedTTL != want.pausedTTL || got.doubled != want.doubled ||
		got.lost != want.lost || got.failed != want.failed || got.unknown != want.unknown {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	kinds := map[string]string{}
	for _, a := range got.anomalies {
		kinds[a.Job] = a.Kind
	}
	for job, kind := range map[string]string{"killed": anomalyKilledFirst, "late": anomalyDoubled, "unexplained": anomalyDoubled,
		"paused": anomalyPausedTTL, "frozen": anomalyPausedTTL, "short": anomalyDoubled, "twice": anomalyDoubled, "none": anomalyLost,
		"queued": anomalyLost, "failed": anomalyFailed} {
		if kinds[job] != kind {
			t.Errorf("job %s: kind %q, want %q", job, kinds[job], kind)
		}
	}
	if _, listed := kinds["once"]; listed {
		t.Error("a job done once is listed as an anomaly")
	}
	if len(got.unknownJobs) != 1 || got.unknownJobs[0] != "unknown" {
		t.Errorf("unknown jobs %v, want [unknown]", got.unknownJobs)
	}
}

// TestReportFailsOnEachProblem: every kind of problem makes the verdict
// FAIL, and a clean report passes.
func TestReportFailsOnEachProblem(t *testing.T) {
	clean := func() *Report { return &Report{Jobs: 10, Accepted: 10, Succeeded: 10, ExactlyOnce: 10} }
	r := clean()
	r.judge(5 * time.Second)
	if !r.OK() || r.Verdict != "PASS" {
		t.Fatalf("a clean report: %s %v", r.Verdict, r.Problems)
	}
	for name, spoil := range map[string]func(*Report){
		"lost":           func(r *Report) { r.Lost = 1 },
		"failed":         func(r *Report) { r.Failed = 1 },
		"doubled":        func(r *Report) { r.Doubled = 1 },
		"unknown":        func(r *Report) { r.UnknownEffects = 1 },
		"slow requeue":   func(r *Report) { r.Detected = Spread{N: 1, Max: 5} },
		"fault problem":  func(r *Report) { r.Faults = []FaultReport{{Fault: FaultForged, Problem: "drained"}} },
		"not submitted":  func(r *Report) { r.Accepted = 9 },
		"given up":       func(r *Report) { r.Accepted, r.Refused = 9, 1 },
		"malformed line": func(r *Report) { r.MalformedEffects = 1 },
	} {
		r := clean()
		spoil(r)
		r.judge(5 * time.Second)
		if r.OK() || r.Verdict != "FAIL" {
			t.Errorf("%s: verdict %s, want FAIL", name, r.Verdict)
		}
	}
	// The allowed doubles alone do not fail a run.
	r = clean()
	r.ExactlyOnce, r.DoubledPausedPastTTL, r.DoubledKilledBeforeRecord = 8, 1, 1
	r.judge(5 * time.Second)
	if !r.OK() {
		t.Errorf("allowed doubles failed the run: %v", r.Problems)
	}
}

func TestParseFaults(t *testing.T) {
	if fs, err := ParseFaults("all"); err != nil || len(fs) != len(AllFaults) {
		t.Fatalf("all: %v %v", fs, err)
	}
	if fs, err := ParseFaults("same-id, worker-kill,same-id"); err != nil || len(fs) != 2 || fs[0] != FaultSameID {
		t.Fatalf("list: %v %v", fs, err)
	}
	if _, err := ParseFaults("worker-kill,meteor"); err == nil {
		t.Fatal("an unknown fault was accepted")
	}
}
