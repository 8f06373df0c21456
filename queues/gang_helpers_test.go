package queues_test

import (
	"context"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/gangs"
)

// The kernel fences a running gang on membership in its ends, requeues and
// beats; its tests start gangs through the gang store (queues/gangs),
// whose own tests cover the claims.

// placedGang submits a retryable gang of two 2-slot members and places
// member 0 on w0, member 1 on w1; it returns the job ID and the deliveries.
func placedGang(t *testing.T, s *queues.Store) (string, []queues.Delivery) {
	t.Helper()
	ctx := context.Background()
	sp := spec("")
	sp.Size = jobs.Size{Slots: 2, Replicas: 2}
	sp.Retryable = true
	sp.MaxRetries = 3
	sub, err := s.Submit(ctx, sp, queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.Place(ctx, sub.Job.ID, 1, []string{"w0", "w1"})
	if err != nil || n != 2 {
		t.Fatalf("Place = %d, %v", n, err)
	}
	d0, d1 := placedTasks(t, s, "w0"), placedTasks(t, s, "w1")
	if len(d0) != 1 || len(d1) != 1 || d0[0].Member != 0 || d1[0].Member != 1 {
		t.Fatalf("deliveries %+v %+v, want member 0 on w0 and member 1 on w1", d0, d1)
	}
	return sub.Job.ID, []queues.Delivery{d0[0], d1[0]}
}

// startGang claims both members (w0 with coordinator "h0:1", incarnations
// i0 and i1) and returns the running record.
func startGang(t *testing.T, s *queues.Store, id string, ds []queues.Delivery) jobs.Job {
	t.Helper()
	ctx := context.Background()
	g := gangs.New(s)
	if _, ok, err := g.ClaimMember(ctx, ds[0], 2, "w0", "i0", "h0:1"); err != nil || !ok {
		t.Fatalf("member 0's claim = %v %v", ok, err)
	}
	j, ok, err := g.ClaimMember(ctx, ds[1], 2, "w1", "i1", "")
	if err != nil || !ok || j.State != jobs.StateRunning || j.Worker != "w0" || j.ID != id {
		t.Fatalf("member 1's claim = %v %v state %s worker %s; want %s running under w0", ok, err, j.State, j.Worker, id)
	}
	return j
}
