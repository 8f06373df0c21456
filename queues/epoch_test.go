package queues_test

import (
	"context"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/queues"
)

// TestEpochFirstStartIsNoLoss: on a namespace nothing ran in, the first
// controller writes the epoch and nobody reports a loss.
func TestEpochFirstStartIsNoLoss(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	worker := queues.NewEpochWatch(s, "w1", false)
	v, err := worker.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Epoch.IsZero() || v.Loss != nil || v.Found != "" || !v.Fresh {
		t.Fatalf("a reader on a fresh namespace: %+v, want no epoch, fresh, no loss", v)
	}
	ctl := queues.NewEpochWatch(s, "c1", true)
	v, err = ctl.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v.Epoch.IsZero() || !v.Created || v.Loss != nil || v.Found != "" {
		t.Fatalf("first controller: %+v, want a created epoch and no loss", v)
	}
	if v, err = worker.Check(ctx); err != nil || v.Found != "" || v.Loss != nil {
		t.Fatalf("worker after the epoch was written: %+v %v, want no loss", v, err)
	}
	if _, loss, err := s.ReadEpoch(ctx); err != nil || loss != nil {
		t.Fatalf("ReadEpoch: %+v %v, want no loss", loss, err)
	}
}

// TestEpochGoneIsRecordedOnce: the namespace's keys vanish (what a Redis
// restarted empty shows); the first process to look writes one loss
// record, every process that saw the old epoch learns of it once, and the
// record stays until acknowledged.
func TestEpochGoneIsRecordedOnce(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	c := testenv.NewClock(time.Now())
	s := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns, Now: c.Now})
	ctx := context.Background()
	ctl1, ctl2 := queues.NewEpochWatch(s, "c1", true), queues.NewEpochWatch(s, "c2", true)
	worker := queues.NewEpochWatch(s, "w1", false)
	for _, w := range []*queues.EpochWatch{ctl1, ctl2, worker} {
		if _, err := w.Check(ctx); err != nil {
			t.Fatal(err)
		}
	}
	old := ctl1.Known()
	if _, err := s.Submit(ctx, spec(""), queues.QueueCore); err != nil {
		t.Fatal(err)
	}
	seen := c.Now()
	c.Add(time.Second)
	testenv.DeleteNamespace(rdb, ns)

	v, err := worker.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v.Found != queues.LossGone || !v.Detected || v.Loss == nil {
		t.Fatalf("worker after the loss: %+v, want it to find and record epoch_gone", v)
	}
	if !v.Loss.LastSeen.Equal(seen.UTC().Truncate(time.Millisecond)) || v.Loss.OldEpoch == "" || v.Loss.By != "w1" {
		t.Fatalf("loss record %+v, want last seen %s, the old epoch, by w1", v.Loss, seen)
	}
	if v, _ = worker.Check(ctx); v.Found != "" || v.Loss == nil {
		t.Fatalf("worker's second look: %+v, want the record and no second finding", v)
	}
	v, err = ctl1.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v.Found != queues.LossGone || v.Detected || !v.Created || v.Epoch == old {
		t.Fatalf("controller 1: %+v, want it to find the loss, write a new epoch, not a second record", v)
	}
	if v, _ = ctl2.Check(ctx); v.Found != queues.LossChanged || v.Detected {
		t.Fatalf("controller 2: %+v, want epoch_changed found, no second record", v)
	}
	if v, _ = ctl2.Check(ctx); v.Found != "" || v.Loss == nil {
		t.Fatalf("controller 2 again: %+v, want nothing new, the record kept", v)
	}
	if v, _ = worker.Check(ctx); v.Found != "" {
		t.Fatalf("worker once the new epoch is written: %+v, want the loss reported only once", v)
	}
	_, loss, err := s.ReadEpoch(ctx)
	if err != nil || loss == nil || loss.Reason != queues.LossGone {
		t.Fatalf("ReadEpoch: %+v %v, want the epoch_gone record", loss, err)
	}
	acked, err := s.AckDataLoss(ctx)
	if err != nil || acked == nil {
		t.Fatalf("AckDataLoss: %+v %v", acked, err)
	}
	if _, loss, _ := s.ReadEpoch(ctx); loss != nil {
		t.Fatalf("after the ack: %+v, want no record", loss)
	}
}

// TestEpochRollbackFound: the epoch stays but the newest job a process saw
// is gone from the index, as after a restore of an older snapshot.
func TestEpochRollbackFound(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	w := queues.NewEpochWatch(s, "c1", true)
	if _, err := w.Check(ctx); err != nil {
		t.Fatal(err)
	}
	sub, err := s.Submit(ctx, spec(""), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := w.Check(ctx); err != nil || v.Newest != sub.Job.ID || v.Found != "" {
		t.Fatalf("after a submit: %+v %v, want the job as newest, no loss", v, err)
	}
	rdb := s.Redis()
	if err := rdb.Del(ctx, s.Namespace().Job(sub.Job.ID)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ZRem(ctx, s.Namespace().JobIndex(), sub.Job.ID).Err(); err != nil {
		t.Fatal(err)
	}
	v, err := w.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v.Found != queues.LossRolledBack || !v.Detected || v.Loss == nil {
		t.Fatalf("after the job vanished: %+v, want rolled_back recorded", v)
	}
}
