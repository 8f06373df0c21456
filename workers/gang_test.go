package workers_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/usage"
	"github.com/ballastdev/ballast/workers"
)

// A gang of two on two workers: each member sees its place in the gang and
// one coordinator. On the first attempt member 1 fails, and member 0 is
// stopped (SIGTERM) although it would run on; the retry runs both members
// again, and the job succeeds once both exited 0.
func TestGangMembersRunAndFailTogether(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, id := range []string{"g0", "g1"} {
		o := e.options()
		o.ID = id
		e.start(o)
	}
	// Attempt 2 is the first placed one (placement starts a new attempt).
	sp := e.shell(`echo "$BALLAST_ATTEMPT $BALLAST_REPLICA $BALLAST_REPLICAS $BALLAST_COORDINATOR" >> "$BALLAST_PARAM_DIR/starts"
trap 'echo "$BALLAST_ATTEMPT $BALLAST_REPLICA" >> "$BALLAST_PARAM_DIR/terms"; exit 143' TERM
if [ "$BALLAST_ATTEMPT" = 2 ]; then
  if [ "$BALLAST_REPLICA" = 1 ]; then sleep 0.3; exit 3; fi
  sleep 30 & wait
fi
exit 0`)
	sp.Size = jobs.Size{Replicas: 2}
	sp.Retryable, sp.MaxRetries = true, 2
	j := e.submit(sp, queues.QueueCore)
	ctx := context.Background()
	if a, err := e.store.Place(ctx, j.ID, 1, []string{"g0", "g1"}); a != 2 || err != nil {
		t.Fatalf("Place = %d, %v", a, err)
	}
	// Member 1 failed: the gang is one new attempt with one retry, and
	// member 0 was told to stop.
	moved := e.waitFor(j.ID, wait, "the gang requeued after member 1 failed", func(j jobs.Job) bool {
		return j.Attempt == 3 && j.State == jobs.StateQueued
	})
	if moved.Retries != 1 {
		t.Fatalf("retries %d, want 1 for the gang", moved.Retries)
	}
	if got := strings.TrimSpace(e.waitLines("terms", 1, wait)); got != "2 0" {
		t.Fatalf("SIGTERMed members %q, want member 0 of attempt 2", got)
	}
	starts := strings.Split(strings.TrimSpace(e.read("starts")), "\n")
	if len(starts) != 2 {
		t.Fatalf("starts %q, want both members of attempt 2", starts)
	}
	coords := map[string]bool{}
	seen := map[string]bool{}
	for _, l := range starts {
		f := strings.Fields(l)
		if len(f) != 4 || f[0] != "2" || f[2] != "2" || !strings.Contains(f[3], ":") {
			t.Fatalf("start line %q, want attempt 2, replicas 2, a host:port", l)
		}
		seen[f[1]] = true
		coords[f[3]] = true
	}
	if !seen["0"] || !seen["1"] || len(coords) != 1 {
		t.Fatalf("starts %q: want replicas 0 and 1 and one coordinator", starts)
	}
	// Placed again (the controller's part), both members run and succeed.
	place := func() int {
		a, err := e.store.Place(ctx, j.ID, 3, []string{"g1", "g0"})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	if a := place(); a != 4 {
		t.Fatalf("second placement at attempt %d, want 4", a)
	}
	done := e.waitTerminal(j.ID, 10*time.Second)
	if done.State != jobs.StateSucceeded || done.Attempt != 4 || done.Retries != 1 {
		t.Fatalf("the gang ended %s at attempt %d with %d retries: %s", done.State, done.Attempt, done.Retries, done.LastError)
	}
	// The gang has ended: all its attempts are in the usage entries.
	us, err := usage.New(e.store).Usage(ctx, nil, time.Time{}, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(us) != 2 || us[0].Outcome != "retried" || us[1].Outcome != "succeeded" || us[1].Slots != 2 {
		t.Fatalf("usage %+v, want one retried and one succeeded attempt of 2 slots", us)
	}
	for _, id := range []string{"g0", "g1"} {
		if n, _ := e.rdb.SCard(ctx, e.store.Namespace().WorkerJobs(id)).Result(); n != 0 {
			t.Errorf("%s still lists the finished gang", id)
		}
	}
}

// A member waits, claimed, for the rest of its gang and never starts alone:
// when the gang's attempt moves on meanwhile (here: the placement taken
// back, as the controller does when a member's worker stops taking placed
// work), it gives its slots back and leaves the gang unlisted.
func TestGangMemberNeverStartsAlone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := e.options()
	o.ID = "solo"
	w := e.start(o)
	sp := e.shell(`touch "$BALLAST_PARAM_DIR/ran"`)
	sp.Size = jobs.Size{Replicas: 2}
	j := e.submit(sp, queues.QueueCore)
	ctx := context.Background()
	if a, err := e.store.Place(ctx, j.ID, 1, []string{"solo", "absent"}); a != 2 || err != nil {
		t.Fatalf("Place = %d, %v", a, err)
	}
	testenv.Eventually(t, wait, "member 0 claimed on solo", func() bool {
		n, _ := e.rdb.SCard(ctx, e.store.Namespace().WorkerJobs("solo")).Result()
		return n == 1
	})
	time.Sleep(300 * time.Millisecond) // some polls of the wait
	if got := e.get(j.ID); got.State != jobs.StateQueued || w.Running() != 0 {
		t.Fatalf("with one member of two claimed: %s, %d running", got.State, w.Running())
	}
	if a, err := e.store.Move(ctx, j.ID, 2, queues.QueueCore, "placement taken back"); a != 3 || err != nil {
		t.Fatalf("Move = %d, %v", a, err)
	}
	testenv.Eventually(t, wait, "solo gave the member up", func() bool {
		n, _ := e.rdb.SCard(ctx, e.store.Namespace().WorkerJobs("solo")).Result()
		return n == 0
	})
	if _, err := os.Stat(e.path("ran")); err == nil {
		t.Fatal("a member of a gang that never assembled ran")
	}
}

// When member 1's worker drains, member 0 checkpoints the gang and requeues
// it (one preemption), so the work since the gang's last checkpoint is not
// thrown away by the member that leaves.
func TestDrainingMemberHasMember0CheckpointTheGang(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws := map[string]*workers.Worker{}
	for _, id := range []string{"d0", "d1"} {
		o := e.options()
		o.ID = id
		ws[id] = e.start(o)
	}
	sp := e.shell(`trap 'echo "{\"checkpoint\": \"r$BALLAST_REPLICA\"}"; exit 143' TERM
touch "$BALLAST_PARAM_DIR/up$BALLAST_REPLICA"
sleep 30 & wait`)
	sp.Size = jobs.Size{Replicas: 2}
	sp.Checkpointable = true
	j := e.submit(sp, queues.QueueCore)
	ctx := context.Background()
	if a, err := e.store.Place(ctx, j.ID, 1, []string{"d0", "d1"}); a != 2 || err != nil {
		t.Fatalf("Place = %d, %v", a, err)
	}
	e.waitFile("up0", wait)
	e.waitFile("up1", wait)
	ws["d1"].Stop()
	got := e.waitFor(j.ID, wait, "the gang requeued by member 0", func(j jobs.Job) bool {
		return j.Attempt == 3 && j.State == jobs.StateQueued
	})
	if got.Checkpoint != "r0" || got.Preemptions != 1 || got.Requeues != 0 {
		t.Fatalf("after the drain: checkpoint %q, preemptions %d, requeues %d; want member 0's checkpoint and one preemption",
			got.Checkpoint, got.Preemptions, got.Requeues)
	}
}

// A gang reserved on a worker that is still busy does not time out and
// start over: member 0, claimed on an idle worker, waits past its start
// timeout (1 s here) while member 1's worker holds its delivery for the
// slot a 3 s job frees, and both start on the placement's attempt. A
// member that no worker holds still times the gang out
// (TestGangMemberNeverStartsAlone covers the move).
func TestGangWaitsForAMemberHeldOnABusyWorker(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	early := e.options()
	early.ID, early.Queues, early.GangStartTimeout = "early", []queues.Queue{queues.QueueLoan}, time.Second
	e.start(early)
	late := e.options()
	late.ID, late.Slots, late.GangStartTimeout = "late", 1, time.Second
	e.start(late)
	busy := e.submit(e.shell(`sleep 3`), queues.QueueCore)
	e.waitFor(busy.ID, wait, "the 3 s job running on late", func(j jobs.Job) bool {
		return j.State == jobs.StateRunning && j.Worker == "late"
	})
	sp := e.shell(`echo "$BALLAST_ATTEMPT $BALLAST_REPLICA $(date +%s%N)" >> "$BALLAST_PARAM_DIR/starts"`)
	sp.Size = jobs.Size{Replicas: 2}
	g := e.submit(sp, queues.QueueCore)
	ctx := context.Background()
	placedAt := time.Now()
	if a, err := e.store.Place(ctx, g.ID, 1, []string{"early", "late"}); a != 2 || err != nil {
		t.Fatalf("Place = %d, %v", a, err)
	}
	done := e.waitTerminal(g.ID, 15*time.Second)
	if done.State != jobs.StateSucceeded || done.Attempt != 2 {
		t.Fatalf("the gang ended %s at attempt %d (%s), want succeeded at the placement's attempt 2", done.State, done.Attempt, done.LastError)
	}
	starts := strings.Split(strings.TrimSpace(e.read("starts")), "\n")
	if len(starts) != 2 {
		t.Fatalf("starts %q, want both members once", starts)
	}
	for _, l := range starts {
		f := strings.Fields(l)
		if len(f) != 3 || f[0] != "2" {
			t.Fatalf("start line %q, want attempt 2", l)
		}
	}
	if waited := time.Since(placedAt); waited < 2*time.Second {
		t.Fatalf("the gang was done %s after its placement, before the busy slot freed: the case tests nothing", waited)
	}
}
