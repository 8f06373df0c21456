package workers_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/usage"
	"github.com/ballastdev/ballast/workers"
)

// redisSnapshot is every key of a namespace as DUMP gives it: what a
// replica held when its master failed.
type redisSnapshot map[string]string

func snapshotNamespace(t *testing.T, rdb *redis.Client, ns queues.Namespace) redisSnapshot {
	t.Helper()
	return snapshotOf(t, rdb, ns.KeyPatterns())
}

// snapshotOf is every key matching patterns, as DUMP gives it.
func snapshotOf(t *testing.T, rdb *redis.Client, patterns []string) redisSnapshot {
	t.Helper()
	ctx := context.Background()
	snap := redisSnapshot{}
	for _, p := range patterns {
		err := queues.ScanKeys(ctx, rdb, p, func(keys []string) error {
			for _, k := range keys {
				v, err := rdb.Dump(ctx, k).Result()
				if err == redis.Nil {
					continue // gone since the scan
				}
				if err != nil {
					return err
				}
				snap[k] = v
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return snap
}

// restore puts the namespace back as it was at the snapshot, as a
// promoted replica that had received nothing since would hold it. The TTLs
// are not kept: none of the keys it restores expires within the test.
func (snap redisSnapshot) restore(t *testing.T, rdb *redis.Client, ns queues.Namespace) {
	t.Helper()
	snap.restoreOver(t, rdb, ns.KeyPatterns())
}

// restoreOver puts back the keys matching patterns as they were at the
// snapshot (taken with the same patterns).
func (snap redisSnapshot) restoreOver(t *testing.T, rdb *redis.Client, patterns []string) {
	t.Helper()
	ctx := context.Background()
	for k := range snapshotOf(t, rdb, patterns) {
		if _, keep := snap[k]; !keep {
			rdb.Del(ctx, k)
		}
	}
	for k, v := range snap {
		if err := rdb.RestoreReplace(ctx, k, 0, v).Err(); err != nil {
			t.Fatalf("restoring %s: %v", k, err)
		}
	}
}

// stepClock is a clock the test moves; it also moves on its own, with real
// time, so the worker's timers and back-offs behave.
type stepClock struct {
	mu   sync.Mutex
	skew time.Duration
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.skew)
}

func (c *stepClock) Add(d time.Duration) {
	c.mu.Lock()
	c.skew += d
	c.mu.Unlock()
}

// lostEnd is a worker that ran one job to its end, and the namespace then
// put back as it was while the job ran: what a replica promoted without
// the last writes holds.
type lostEnd struct {
	e     *env
	c     *stepClock
	store *queues.Store
	w     *workers.Worker
	runs  *atomic.Int64
	// ended is the record as first ended.
	ended jobs.Job
}

// newLostEnd runs the job on a worker served by asynq (asynqShared) or by
// the taker. The snapshot is taken while the job runs, or, with
// beforeClaim, while it waits in its paused queue: the claim is lost too.
func newLostEnd(t *testing.T, asynqShared, beforeClaim bool) *lostEnd {
	t.Helper()
	e := newEnv(t)
	l := &lostEnd{e: e, c: &stepClock{}, runs: &atomic.Int64{}}
	l.store = queues.NewStore(e.rdb, queues.StoreOptions{Namespace: e.ns, Now: l.c.Now})
	gate := make(chan struct{})
	o := e.options()
	o.Now, o.AsynqShared = l.c.Now, asynqShared
	o.Handlers = map[string]workers.Handler{"gated": func(ctx context.Context, _ *workers.Run) error {
		l.runs.Add(1)
		select {
		case <-gate:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
	l.w = e.startOn(l.store, o)
	insp := asynq.NewInspectorFromRedisClient(e.rdb)
	qname := l.store.Namespace().AsynqQueue(queues.QueueCore)
	if beforeClaim {
		if err := insp.PauseQueue(qname); err != nil {
			t.Fatal(err)
		}
	}
	sub, err := l.store.Submit(context.Background(), jobs.Spec{Handler: "gated", Class: jobs.ClassCore, Rhythm: jobs.RhythmPeriodic,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}, queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	id := sub.Job.ID
	var snap redisSnapshot
	if beforeClaim {
		snap = snapshotNamespace(t, e.rdb, l.store.Namespace())
		if err := insp.UnpauseQueue(qname); err != nil {
			t.Fatal(err)
		}
	}
	e.waitFor(id, wait, "running", func(j jobs.Job) bool { return j.State == jobs.StateRunning })
	if !beforeClaim {
		snap = snapshotNamespace(t, e.rdb, l.store.Namespace())
	}
	close(gate)
	if l.ended = e.waitTerminal(id, wait); l.ended.State != jobs.StateSucceeded {
		t.Fatalf("the job ended %s", l.ended.State)
	}
	// The record is terminal as soon as the finish commits; the worker
	// notes the end's time just after, and must do so before the clock
	// moves below (it did not once in CI, and remembered the end an hour
	// early). A job leaves the worker's list only once it is settled.
	testenv.Eventually(t, wait, "the worker settled the job", func() bool { return l.w.Running() == 0 })
	// The beats must not name the attempt in these tests unless the test
	// moves the clock on: it goes back an hour, and the attempt claimed
	// since then is always younger than the grace.
	l.c.Add(-time.Hour)
	if beforeClaim {
		// Paused before the restore, which keeps the marker (the snapshot
		// holds it): the worker must not take the delivery back before the
		// record is checked below.
		if err := insp.PauseQueue(qname); err != nil {
			t.Fatal(err)
		}
	}
	snap.restore(t, e.rdb, l.store.Namespace())
	want := jobs.StateRunning
	if beforeClaim {
		want = jobs.StateQueued
	}
	if got := e.get(id); got.State != want || (want == jobs.StateRunning && got.Worker != l.w.ID()) {
		t.Fatalf("after the restore the job is %s on %q, want %s: the test did not lose the end", got.State, got.Worker, want)
	}
	if beforeClaim { // the snapshot holds the queue paused
		if err := insp.UnpauseQueue(qname); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// check waits for the job to be on record as it first ended, once: at
// its first attempt, at about the time it ended, with one usage record.
func (l *lostEnd) check(t *testing.T) {
	t.Helper()
	got := l.e.waitTerminal(l.ended.ID, wait)
	// The worker notes the end as the finish returns: a moment after the
	// record's first stamp, and long before the repair (the clock moved an
	// hour since).
	late := got.FinishedAt.Sub(l.ended.FinishedAt)
	if got.State != jobs.StateSucceeded || got.Attempt != 1 || late < 0 || late > 10*time.Second {
		t.Fatalf("job %s at attempt %d, finished %s; want succeeded at attempt 1, finished at %s as first recorded",
			got.State, got.Attempt, got.FinishedAt, l.ended.FinishedAt)
	}
	if n := l.runs.Load(); n != 1 {
		t.Fatalf("the job ran %d times", n)
	}
	// The job has ended: its attempt is in the usage entries.
	us, err := usage.New(l.store).Usage(context.Background(), nil, time.Time{}, time.Now().Add(3*time.Hour))
	if err != nil || len(us) != 1 || !us[0].End.Equal(got.FinishedAt) || us[0].Outcome != "succeeded" {
		t.Fatalf("usage %+v (%v), want one succeeded attempt ending %s", us, err, got.FinishedAt)
	}
	testenv.Eventually(t, wait, "the worker's running set emptied", func() bool {
		n, err := l.e.rdb.SCard(context.Background(), l.store.Namespace().WorkerJobs(l.w.ID())).Result()
		return err == nil && n == 0
	})
}

// TestAnEndRedisLostIsRecordedAgainNotRunAgain: a job ends and its end is
// recorded, then Redis loses every write since the job was running (a
// failover to a replica that had not received them). The record says
// running on a live worker that runs nothing. The worker's beat names the
// attempt; the worker remembers ending it, and records the end again, at
// the time it ended: the job does not run twice, and is not left running.
func TestAnEndRedisLostIsRecordedAgainNotRunAgain(t *testing.T) {
	t.Parallel()
	l := newLostEnd(t, false, false)
	// Past the grace in which a claim may still be in flight.
	l.c.Add(time.Hour + time.Minute)
	l.check(t)
}

// TestADeliveryOfAnAttemptItEndedIsNotRunAgain: after the same loss, asynq
// delivers the attempt again (its lease ran out on the promoted replica).
// A worker's claim of its own running attempt is repeatable, so the claim
// alone would run the job twice; the worker remembers ending it and
// records the end again instead.
func TestADeliveryOfAnAttemptItEndedIsNotRunAgain(t *testing.T) {
	t.Parallel()
	l := newLostEnd(t, true, false)
	cl := asynq.NewClientFromRedisClient(l.e.rdb)
	d := queues.Delivery{JobID: l.ended.ID, Attempt: 1}
	if _, err := cl.Enqueue(asynq.NewTask(queues.TaskType, d.Encode()), asynq.Queue(l.store.Namespace().AsynqQueue(queues.QueueCore)),
		asynq.TaskID("again-"+testenv.RandomHex(4))); err != nil {
		t.Fatal(err)
	}
	// No beat names the attempt (see newLostEnd): only the delivery can
	// record the end again.
	l.check(t)
}

// TestAnAttemptWhoseClaimAndEndWereLostIsNotRunAgain: Redis lost the claim
// too, so the record is queued and the delivery waits again. The worker
// that takes it again claims it, remembers ending it, and records the end
// instead of running it: taken by the taker, or delivered by asynq.
func TestAnAttemptWhoseClaimAndEndWereLostIsNotRunAgain(t *testing.T) {
	t.Parallel()
	for _, shared := range []bool{false, true} {
		t.Run(map[bool]string{false: "taker", true: "asynq"}[shared], func(t *testing.T) {
			t.Parallel()
			newLostEnd(t, shared, true).check(t)
		})
	}
}

// TestAnAttemptOnRecordHereThatNeverRanIsRequeued: the record gives a
// running attempt to a live worker that never ran it (a process of the ID
// claimed it and stopped unrecorded). The worker's beat names it, the
// worker did not end it, and requeues it: it runs, once, at the next
// attempt.
func TestAnAttemptOnRecordHereThatNeverRanIsRequeued(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := &stepClock{}
	store := queues.NewStore(e.rdb, queues.StoreOptions{Namespace: e.ns, Now: c.Now})
	var runs atomic.Int64
	o := e.options()
	o.Now = c.Now
	o.Handlers = map[string]workers.Handler{"count": func(context.Context, *workers.Run) error {
		runs.Add(1)
		return nil
	}}
	w := e.startOn(store, o)
	// The queue is paused while the job is claimed under the worker's ID
	// behind its back, so the worker cannot take the delivery itself.
	ctx := context.Background()
	insp := asynq.NewInspectorFromRedisClient(e.rdb)
	qname := store.Namespace().AsynqQueue(queues.QueueCore)
	if err := insp.PauseQueue(qname); err != nil {
		t.Fatal(err)
	}
	sub, err := store.Submit(ctx, jobs.Spec{Handler: "count", Class: jobs.ClassCore, Rhythm: jobs.RhythmPeriodic,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}, queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := store.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, w.ID()); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	c.Add(time.Minute)
	e.waitFor(sub.Job.ID, wait, "requeued", func(j jobs.Job) bool { return j.State == jobs.StateQueued && j.Attempt == 2 })
	if err := insp.UnpauseQueue(qname); err != nil {
		t.Fatal(err)
	}
	got := e.waitTerminal(sub.Job.ID, wait)
	if got.State != jobs.StateSucceeded || got.Attempt != 2 {
		t.Fatalf("job %s at attempt %d, want succeeded at attempt 2", got.State, got.Attempt)
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("the job ran %d times", n)
	}
}

// TestALostGangRetryIsRequeuedOnceNoMemberRunsIt: a member of a gang
// fails and the gang is requeued for a retry, then Redis loses that
// requeue: the record says the attempt runs, and no worker runs a member
// of it. A retry is a move, not an end, so no worker remembers it, and no
// member's worker alone may requeue a gang. Each beat of each member's
// worker says it runs no member; once that holds for every member (or the
// member ended), the gang is requeued, once, and runs on at its next
// placement. Without the check across the members' workers it stayed
// running on record until cancelled.
func TestALostGangRetryIsRequeuedOnceNoMemberRunsIt(t *testing.T) {
	t.Parallel()
	// Attempt 2 is the first placed one (placement starts a new attempt).
	for _, c := range []struct {
		name  string
		place []string
		// failing is the member that fails attempt 2 once the test
		// touches "fail"; the other runs until stopped, or, with
		// otherEnds, exits 0 at once and the snapshot is taken after its
		// end is recorded.
		failing   int
		otherEnds bool
	}{
		{name: "members on two workers", place: []string{"l0", "l1"}, failing: 1},
		// The worker remembers member 1's end, and records it again; it
		// must still say it runs member 0 no more.
		{name: "both on one worker, one ended", place: []string{"s0", "s0"}, failing: 0, otherEnds: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			lostGangRetry(t, c.place, c.failing, c.otherEnds)
		})
	}
}

func lostGangRetry(t *testing.T, place []string, failing int, otherEnds bool) {
	t.Helper()
	e := newEnv(t)
	c := &stepClock{}
	store := queues.NewStore(e.rdb, queues.StoreOptions{Namespace: e.ns, Now: c.Now})
	var ws []*workers.Worker
	for _, id := range slices.Compact(slices.Clone(place)) {
		o := e.options()
		o.ID, o.Now = id, c.Now
		ws = append(ws, e.startOn(store, o))
	}
	other := "trap 'exit 143' TERM; sleep 30 & wait"
	if otherEnds {
		other = "exit 0"
	}
	sp := e.shell(`echo "$BALLAST_ATTEMPT $BALLAST_REPLICA" >> "$BALLAST_PARAM_DIR/starts"
if [ "$BALLAST_ATTEMPT" = 2 ]; then
  touch "$BALLAST_PARAM_DIR/up$BALLAST_REPLICA"
  if [ "$BALLAST_REPLICA" = ` + strconv.Itoa(failing) + ` ]; then
    while [ ! -e "$BALLAST_PARAM_DIR/fail" ]; do sleep 0.05; done
    exit 3
  fi
  ` + other + `
fi
exit 0`)
	sp.Size = jobs.Size{Replicas: 2}
	sp.Retryable, sp.MaxRetries = true, 2
	j := e.submit(sp, queues.QueueCore)
	ctx := context.Background()
	if a, err := store.Place(ctx, j.ID, 1, place); a != 2 || err != nil {
		t.Fatalf("Place = %d, %v", a, err)
	}
	e.waitFile("up0", wait)
	e.waitFile("up1", wait)
	e.waitFor(j.ID, wait, "the gang running", func(j jobs.Job) bool { return j.State == jobs.StateRunning })
	if otherEnds {
		done := "d" + strconv.Itoa(1-failing)
		testenv.Eventually(t, wait, "the other member's end recorded", func() bool {
			return e.rdb.HGet(ctx, store.Namespace().Job(j.ID), done).Val() == "2|1"
		})
	}
	// Ballast's keys only: asynq's deliveries of attempt 2 stay done, so
	// none comes back to be claimed again (a member claimed again is
	// TestAGangIsRequeuedOnlyOnceEveryMembersWorkerRunsNone's, in queues).
	ballast := []string{store.Namespace().Prefix() + "*"}
	snap := snapshotOf(t, e.rdb, ballast)
	e.touch("fail")
	e.waitFor(j.ID, wait, "the retry", func(j jobs.Job) bool { return j.Attempt == 3 && j.State == jobs.StateQueued })
	testenv.Eventually(t, wait, "every member stopped", func() bool {
		return !slices.ContainsFunc(ws, func(w *workers.Worker) bool { return w.Running() != 0 })
	})
	snap.restoreOver(t, e.rdb, ballast)
	if got := e.get(j.ID); got.State != jobs.StateRunning || got.Attempt != 2 {
		t.Fatalf("after the restore the gang is %s at attempt %d: the test did not lose the retry", got.State, got.Attempt)
	}
	// Past the grace since the claims: the beats name the attempt.
	c.Add(time.Minute)
	got := e.waitFor(j.ID, wait, "the gang requeued", func(j jobs.Job) bool { return j.Attempt != 2 || j.State != jobs.StateRunning })
	if got.State != jobs.StateQueued || got.Attempt != 3 || !strings.Contains(got.LastError, "ran no member of it") {
		t.Fatalf("the gang is %s at attempt %d (%q), want queued at attempt 3 by the check across its workers",
			got.State, got.Attempt, got.LastError)
	}
	for _, id := range place {
		if n, _ := e.rdb.SCard(ctx, store.Namespace().WorkerJobs(id)).Result(); n != 0 {
			t.Errorf("%s still lists the requeued gang", id)
		}
	}
	if a, err := store.Place(ctx, j.ID, 3, []string{place[1], place[0]}); a != 4 || err != nil {
		t.Fatalf("Place = %d, %v", a, err)
	}
	done := e.waitTerminal(j.ID, wait)
	if done.State != jobs.StateSucceeded || done.Attempt != 4 {
		t.Fatalf("the gang ended %s at attempt %d: %s", done.State, done.Attempt, done.LastError)
	}
	if starts := strings.Split(strings.TrimSpace(e.read("starts")), "\n"); len(starts) != 4 {
		t.Fatalf("member starts %q: want each member once at attempts 2 and 4", starts)
	}
}
