package usage_test

import (
	"context"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/usage"
)

// TestUsageRecordsEveryAttemptOnceWithItsPool walks one job through a
// preemption on a spot worker, a retry and a success on a fixed worker, and
// a second job through a dead worker, and reads back one usage entry per
// attempt with the times, pool, lost work and outcome each path must give.
func TestUsageRecordsEveryAttemptOnceWithItsPool(t *testing.T) {
	t.Parallel()
	s, acct, c := newStores(t)
	ctx := context.Background()
	c.Set(time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC))
	t0 := c.Now()
	spot := queues.WorkerInfo{ID: "spot-1", Pool: "spot", Slots: 2, StartedAt: t0}
	fixed := queues.WorkerInfo{ID: "fixed-1", Pool: "fixed", Slots: 4, StartedAt: t0}
	for _, w := range []queues.WorkerInfo{spot, fixed} {
		if _, err := s.Heartbeat(ctx, w, nil); err != nil {
			t.Fatal(err)
		}
	}
	sp := spec()
	sp.Team, sp.Template, sp.Class = "vision", "train", jobs.ClassBurst
	sub, err := s.Submit(ctx, sp, queues.QueueBurst)
	if err != nil {
		t.Fatal(err)
	}
	id := sub.Job.ID

	// Attempt 1 on spot: waits 30 s, runs 10 min, checkpoints at 8 min,
	// is preempted at 10: two minutes are lost.
	c.Add(30 * time.Second)
	j, ok, err := s.Claim(ctx, queues.Delivery{JobID: id, Attempt: 1}, spot.ID)
	if err != nil || !ok || j.Pool != "spot" {
		t.Fatalf("claim: ok %v pool %q err %v", ok, j.Pool, err)
	}
	c.Add(8 * time.Minute)
	if _, err := s.Checkpoint(ctx, j, spot.ID, "ckpt-1"); err != nil {
		t.Fatal(err)
	}
	c.Add(2 * time.Minute)
	if _, err := s.Requeue(ctx, j, spot.ID, queues.Requeue{Preempt: true, Queue: queues.QueueLoan}); err != nil {
		t.Fatal(err)
	}
	// Attempt 2 on the fixed worker fails after 1 min: a retry, nothing lost.
	c.Add(time.Minute)
	j, ok, err = s.Claim(ctx, queues.Delivery{JobID: id, Attempt: 2}, fixed.ID)
	if err != nil || !ok || j.Pool != "fixed" {
		t.Fatalf("claim 2: ok %v pool %q err %v", ok, j.Pool, err)
	}
	c.Add(time.Minute)
	if _, err := s.Requeue(ctx, j, fixed.ID, queues.Requeue{Retry: true, Reason: "exit 1", NotBefore: c.Now().Add(30 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	// Attempt 3 starts 40 s later, 10 s after its back-off ended: it
	// waited 10 s for capacity. It succeeds after 5 min.
	c.Add(40 * time.Second)
	j, _, _ = s.Claim(ctx, queues.Delivery{JobID: id, Attempt: 3}, fixed.ID)
	c.Add(5 * time.Minute)
	code := 0
	if ok, err := s.Finish(ctx, j, fixed.ID, jobs.StateSucceeded, &code, ""); err != nil || !ok {
		t.Fatalf("finish: %v %v", ok, err)
	}
	// A repeated finish of attempt 3 (a retry after a lost reply) is told
	// its end is on record, and records nothing more; a different end of
	// it is refused.
	if ok, _ := s.Finish(ctx, j, fixed.ID, jobs.StateSucceeded, &code, ""); !ok {
		t.Fatal("a repeated finish of one attempt was not told it is on record")
	}
	if ok, _ := s.Finish(ctx, j, fixed.ID, jobs.StateFailed, &code, "late"); ok {
		t.Fatal("a second, different finish of one attempt was accepted")
	}

	// A second job runs on spot-1, which then goes silent.
	sub2, _ := s.Submit(ctx, sp, queues.QueueBurst)
	if _, ok, _ := s.Claim(ctx, queues.Delivery{JobID: sub2.Job.ID, Attempt: 1}, spot.ID); !ok {
		t.Fatal("claim of the second job")
	}
	lastBeat := c.Now().Add(3 * time.Minute)
	c.Add(3 * time.Minute)
	if _, err := s.Heartbeat(ctx, spot, []queues.Delivery{{JobID: sub2.Job.ID, Attempt: 1}}); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Minute)
	if got, _ := attempts(ctx, s, acct, t0, c.Now()); len(got) != 4 || got[3].Outcome != "running" || got[3].Pool != "spot" {
		t.Fatalf("before the loss want 3 ended and 1 running, got %+v", got)
	}
	c.Add(2 * time.Minute)
	if _, err := s.Heartbeat(ctx, fixed, nil); err != nil { // fixed-1 lives on
		t.Fatal(err)
	}
	if rec, err := s.RecoverDeadWorkers(ctx, time.Minute); err != nil || len(rec) != 1 {
		t.Fatalf("recover: %v %v", rec, err)
	}

	got, err := attempts(ctx, s, acct, t0, c.Now())
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		attempt       int
		pool, outcome string
		wait, run     time.Duration
		lost          time.Duration
	}
	wants := []want{
		{1, "spot", "preempted", 30 * time.Second, 10 * time.Minute, 2 * time.Minute},
		{2, "fixed", "retried", time.Minute, time.Minute, 0},
		{3, "fixed", "succeeded", 10 * time.Second, 5 * time.Minute, 0},
		{1, "spot", "lost", 0, 3 * time.Minute, 3 * time.Minute},
	}
	if len(got) != len(wants) {
		t.Fatalf("want %d attempts, got %d: %+v", len(wants), len(got), got)
	}
	for i, w := range wants {
		u := got[i]
		if u.Attempt != w.attempt || u.Pool != w.pool || u.Outcome != w.outcome || u.Wait() != w.wait ||
			u.End.Sub(u.Start) != w.run || u.Lost != w.lost || u.Team != "vision" || u.Template != "train" || u.Class != "burst" {
			t.Errorf("attempt %d: got %+v (wait %s, run %s), want %+v", i, u, u.Wait(), u.End.Sub(u.Start), w)
		}
	}
	if !got[3].End.Equal(lastBeat) {
		t.Errorf("a dead worker's attempt must end at its last beat %s, got %s", lastBeat, got[3].End)
	}

	// The fixed worker stops cleanly; the spot one died at its last beat.
	stop := c.Now()
	if err := s.Deregister(ctx, fixed.ID); err != nil {
		t.Fatal(err)
	}
	lives, err := acct.WorkerLives(ctx, t0, c.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ends := map[string]time.Time{}
	for _, l := range lives {
		ends[l.Pool+"/"+l.ID] = l.End
		if !l.Start.Equal(t0) || (l.ID == spot.ID && l.Slots != 2) {
			t.Errorf("life %+v", l)
		}
	}
	if len(lives) != 2 || !ends["spot/spot-1"].Equal(lastBeat) || !ends["fixed/fixed-1"].Equal(stop) {
		t.Fatalf("lives %+v", lives)
	}

	// A window after everything ended sees nothing; trimming drops it all.
	if got, _ := attempts(ctx, s, acct, c.Now().Add(time.Minute), c.Now().Add(time.Hour)); len(got) != 0 {
		t.Fatalf("a later window holds %+v", got)
	}
	if err := acct.TrimAccounting(ctx, c.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got, _ := attempts(ctx, s, acct, t0, c.Now()); len(got) != 0 {
		t.Fatalf("after trim %+v", got)
	}
	if lives, _ := acct.WorkerLives(ctx, t0, c.Now()); len(lives) != 0 {
		t.Fatalf("lives after trim %+v", lives)
	}
}

// TestALivingWorkerKeepsItsLifeThroughTrims: trimming is by end, so a
// worker started long ago and still running keeps being billed.
func TestALivingWorkerKeepsItsLifeThroughTrims(t *testing.T) {
	t.Parallel()
	s, acct, c := newStores(t)
	ctx := context.Background()
	w := queues.WorkerInfo{ID: "od-1", Pool: "ondemand", Slots: 1, StartedAt: c.Now()}
	for range 3 { // every beat after the first leaves the life alone
		if _, err := s.Heartbeat(ctx, w, nil); err != nil {
			t.Fatal(err)
		}
		c.Add(time.Hour)
	}
	if err := acct.TrimAccounting(ctx, c.Now()); err != nil {
		t.Fatal(err)
	}
	lives, err := acct.WorkerLives(ctx, c.Now().Add(-time.Minute), c.Now())
	if err != nil || len(lives) != 1 || !lives[0].End.IsZero() || !lives[0].Start.Equal(w.StartedAt.Truncate(time.Millisecond)) {
		t.Fatalf("lives %+v err %v", lives, err)
	}
}

// TestAStaleLaunchIsClosedAtItsStartByTheTrim: a launch nothing resolved in
// the whole retention is closed at its start (so billed its minimum, not
// the retention) and then, having ended before the cutoff, trimmed with
// the rest: nothing of it is left pending.
func TestAStaleLaunchIsClosedAtItsStartByTheTrim(t *testing.T) {
	t.Parallel()
	_, acct, c := newStores(t)
	ctx := context.Background()
	launched := c.Now().Truncate(time.Millisecond)
	if err := acct.RecordLaunches(ctx, []usage.Launch{{ID: "i-9", Pool: "spot", Slots: 1, At: launched}}); err != nil {
		t.Fatal(err)
	}
	if err := acct.TrimAccounting(ctx, launched.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if p, _ := acct.PendingLaunches(ctx); len(p) != 1 {
		t.Fatalf("a launch newer than the cutoff must stay pending: %+v", p)
	}
	if err := acct.TrimAccounting(ctx, launched.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	lives, err := acct.WorkerLives(ctx, launched.Add(-time.Hour), launched.Add(2*time.Hour))
	if p, _ := acct.PendingLaunches(ctx); err != nil || len(p) != 0 || len(lives) != 0 {
		t.Fatalf("pending %+v lives %+v err %v", p, lives, err)
	}
	// Closed at a cutoff it started after, a launch keeps its life.
	if err := acct.RecordLaunches(ctx, []usage.Launch{{ID: "i-10", Pool: "spot", Slots: 1, At: launched}}); err != nil {
		t.Fatal(err)
	}
	if ok, err := acct.EndLaunch(ctx, "i-10", launched.Add(-time.Minute)); !ok || err != nil {
		t.Fatalf("close: %v %v", ok, err)
	}
	lives, _ = acct.WorkerLives(ctx, launched.Add(-time.Hour), launched.Add(2*time.Hour))
	if len(lives) != 1 || !lives[0].Start.Equal(launched) || !lives[0].End.Equal(launched) {
		t.Fatalf("an end before the start is the start: %+v", lives)
	}
	// Closing it again, or a registration after, changes nothing.
	if ok, err := acct.EndLaunch(ctx, "i-10", launched.Add(time.Minute)); ok || err != nil {
		t.Fatalf("second close: %v %v", ok, err)
	}
}

// TestALaunchRecordedAfterItsWorkerRegisteredIsSkipped: a provider call
// that retried returns after its first instance registered; that launch
// must not stay pending, or it would be billed again as a failed boot.
func TestALaunchRecordedAfterItsWorkerRegisteredIsSkipped(t *testing.T) {
	t.Parallel()
	s, acct, c := newStores(t)
	ctx := context.Background()
	at := c.Now().Truncate(time.Millisecond)
	if _, err := s.Heartbeat(ctx, queues.WorkerInfo{ID: "i-1", Pool: "spot", Slots: 1, StartedAt: at}, nil); err != nil {
		t.Fatal(err)
	}
	err := acct.RecordLaunches(ctx, []usage.Launch{
		{ID: "i-1", Pool: "spot", Slots: 1, At: at.Add(-time.Minute)},
		{ID: "i-2", Pool: "spot", Slots: 1, At: at.Add(-time.Minute)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := acct.PendingLaunches(ctx); err != nil || len(p) != 1 || p[0].ID != "i-2" {
		t.Fatalf("pending %+v %v, want only i-2", p, err)
	}
}

// TestUsageReadsEveryEntryAcrossPages: entries sharing an end score
// straddle page boundaries and none is lost or read twice.
func TestUsageReadsEveryEntryAcrossPages(t *testing.T) { // not parallel: it sets the page size
	defer usage.SetPage(3)()
	s, acct, c := newStores(t)
	ctx := context.Background()
	t0 := c.Now()
	w := queues.WorkerInfo{ID: "fixed-1", Pool: "fixed", Slots: 20, StartedAt: t0}
	if _, err := s.Heartbeat(ctx, w, nil); err != nil {
		t.Fatal(err)
	}
	var claimed []jobs.Job
	for range 11 {
		sub, err := s.Submit(ctx, spec(), queues.QueueCore)
		if err != nil {
			t.Fatal(err)
		}
		j, _, err := s.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, w.ID)
		if err != nil {
			t.Fatal(err)
		}
		claimed = append(claimed, j)
	}
	code := 0
	for i, j := range claimed[:10] {
		if i%7 == 0 {
			c.Add(time.Second) // ends in runs of equal scores: 7 (over two whole pages), 3
		}
		if ok, err := s.Finish(ctx, j, w.ID, jobs.StateSucceeded, &code, ""); err != nil || !ok {
			t.Fatal(ok, err)
		}
	}
	got, err := attempts(ctx, s, acct, t0, c.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	running := 0
	for _, u := range got {
		seen[u.JobID]++
		if u.Outcome == "running" {
			running++
		}
	}
	if len(got) != 11 || len(seen) != 11 || running != 1 {
		t.Fatalf("%d entries for %d jobs (%d running), want 11 jobs once each with 1 running", len(got), len(seen), running)
	}
}

// TestALifeLeftOpenByAGoneWorkerIsClosedByTheTrim: a registry entry removed
// without closing its life (an older controller's recovery) stops being
// billed at the next trim; a registered worker's life stays open.
func TestALifeLeftOpenByAGoneWorkerIsClosedByTheTrim(t *testing.T) {
	t.Parallel()
	s, acct, c := newStores(t)
	ctx := context.Background()
	start := c.Now().Truncate(time.Millisecond)
	for _, id := range []string{"gone-1", "alive-1"} {
		if _, err := s.Heartbeat(ctx, queues.WorkerInfo{ID: id, Pool: "spot", Slots: 1, StartedAt: start}, nil); err != nil {
			t.Fatal(err)
		}
	}
	ns := s.Namespace()
	if err := s.Redis().ZRem(ctx, ns.Workers(), "gone-1").Err(); err != nil { // as an older recovery did
		t.Fatal(err)
	}
	s.Redis().Del(ctx, ns.Worker("gone-1"))
	c.Add(10 * time.Minute)
	if err := acct.TrimAccounting(ctx, start.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	lives, err := acct.WorkerLives(ctx, start, c.Now().Add(time.Hour))
	if err != nil || len(lives) != 2 {
		t.Fatalf("lives %+v %v", lives, err)
	}
	for _, l := range lives {
		if (l.ID == "gone-1") != !l.End.IsZero() || (l.ID == "gone-1" && !l.End.Equal(c.Now().Truncate(time.Millisecond))) {
			t.Errorf("life %+v", l)
		}
	}
}

// TestUsageEntryKeepsStringsThatNeedEscaping: the scripts write a usage
// entry's JSON by hand, sending only strings that need escaping through
// cjson; quotes, backslashes, control characters and non-ASCII in a
// team, template, pool or worker name come back from the entry as they
// went in.
func TestUsageEntryKeepsStringsThatNeedEscaping(t *testing.T) {
	t.Parallel()
	s, acct, c := newStores(t)
	ctx := context.Background()
	c.Set(time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC))
	w := queues.WorkerInfo{ID: `w"1\x`, Pool: "pool\tnight/é", Slots: 1, StartedAt: c.Now()}
	if _, err := s.Heartbeat(ctx, w, nil); err != nil {
		t.Fatal(err)
	}
	sp := spec()
	sp.Team, sp.Template, sp.Class = "vision \"core\"\n", `a\b`+"\x01"+"日本", jobs.ClassBurst
	sub, err := s.Submit(ctx, sp, queues.QueueBurst)
	if err != nil {
		t.Fatal(err)
	}
	c.Add(time.Second)
	j, ok, err := s.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, w.ID)
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	c.Add(time.Minute)
	if ok, err := s.Finish(ctx, j, w.ID, jobs.StateSucceeded, nil, ""); err != nil || !ok {
		t.Fatalf("finish: %v %v", ok, err)
	}
	us, err := attempts(ctx, s, acct, c.Now().Add(-time.Hour), c.Now().Add(time.Hour))
	if err != nil || len(us) != 1 {
		t.Fatalf("usage: %+v %v", us, err)
	}
	u := us[0]
	if u.JobID != sub.Job.ID || u.Attempt != 1 || u.Team != sp.Team || u.Template != sp.Template || u.Class != string(jobs.ClassBurst) ||
		u.Pool != w.Pool || u.Worker != w.ID || u.Outcome != "succeeded" || u.Slots != 1 ||
		u.Wait() != time.Second || u.End.Sub(u.Start) != time.Minute {
		t.Fatalf("usage entry %+v", u)
	}
}
