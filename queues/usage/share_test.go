package usage_test

import (
	"context"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/usage"
)

// A job with a gpu_share is billed at its share: its usage entry, running
// or ended, says one slot and the share, which it is billed at, in the
// window's usage and on the job's own attempts page alike.
func TestUsageCountsAGPUShare(t *testing.T) {
	t.Parallel()
	s, acct, c := newStores(t)
	ctx := context.Background()
	if _, err := s.Heartbeat(ctx, queues.WorkerInfo{ID: "w1", Pool: "fixed", Slots: 1, StartedAt: c.Now()}, nil); err != nil {
		t.Fatal(err)
	}
	half := spec()
	half.Size = jobs.Size{GPUShare: 0.25}
	sub, err := s.Submit(ctx, half, queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	j, ok, err := s.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "w1")
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if u := usage.RunningUsage(j); u.Slots != 1 || u.Share != 250 || jobs.SlotsUsed(u.Slots, u.Share) != 0.25 {
		t.Errorf("running usage: %d slots, share %d, %.3f GPUs", u.Slots, u.Share, jobs.SlotsUsed(u.Slots, u.Share))
	}
	c.Add(time.Hour)
	if _, err := s.Finish(ctx, j, "w1", jobs.StateSucceeded, nil, ""); err != nil {
		t.Fatal(err)
	}
	us, err := attempts(ctx, s, acct, c.Now().Add(-2*time.Hour), c.Now().Add(time.Minute))
	if err != nil || len(us) != 1 {
		t.Fatalf("usage %v, %v", us, err)
	}
	if u := us[0]; u.Slots != 1 || u.Share != 250 || jobs.SlotsUsed(u.Slots, u.Share) != 0.25 {
		t.Errorf("ended usage: %d slots, share %d, %.3f GPUs", u.Slots, u.Share, jobs.SlotsUsed(u.Slots, u.Share))
	}
	fin, err := s.Get(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	own, complete, err := acct.JobUsage(ctx, fin)
	if err != nil || !complete || len(own) != 1 {
		t.Fatalf("job usage %v, complete %v, %v", own, complete, err)
	}
	if u := own[0]; u.Slots != 1 || u.Share != 250 {
		t.Errorf("the job's attempts page: %d slots, share %d, want 1 slot at share 250", u.Slots, u.Share)
	}
}
