package chaos

import (
	"context"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// TestUnclaimedFindsATakenDeliveryNobodyClaimed: an asynq server whose
// handler never claims (a worker that died between taking a task and the
// claim script) leaves the task active and the record queued; unclaimed
// finds that attempt and nothing else, and a claimed one is not reported.
func TestUnclaimedFindsATakenDeliveryNobodyClaimed(t *testing.T) {
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	spec := jobs.Spec{Template: "t", Command: []string{"true"}, Class: jobs.ClassCore, Rhythm: jobs.RhythmPeriodic,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}
	held, err := store.Submit(ctx, spec, queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	testenv.HoldTask(t, rdb, store.Namespace().AsynqQueue(queues.QueueCore))
	got := unclaimed(ctx, store, 50*time.Millisecond)
	want := attemptKey{held.Job.ID, 1}
	if len(got) != 1 || !got[want] {
		t.Fatalf("unclaimed = %v, want just %v", got, want)
	}
	// Claimed, the same delivery is a worker's again.
	if _, ok, err := store.Claim(ctx, queues.Delivery{JobID: held.Job.ID, Attempt: 1}, "w1"); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if got := unclaimed(ctx, store, 50*time.Millisecond); len(got) != 0 {
		t.Fatalf("after the claim, unclaimed = %v", got)
	}
}
