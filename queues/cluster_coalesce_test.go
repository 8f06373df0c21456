package queues_test

import (
	"context"
	"sync"
	"testing"

	"github.com/ballastdev/ballast/queues"
)

// TestClusterConcurrentSubmitClaimFinish: concurrent submits, claims and
// finishes through one store on a Redis Cluster, where they travel in
// pipelines, each answer its own caller.
func TestClusterConcurrentSubmitClaimFinish(t *testing.T) {
	s, _, _ := clusterStore(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 48 {
		wg.Go(func() {
			sub, err := s.Submit(ctx, spec(""), queues.QueueCore)
			if err != nil {
				t.Errorf("submit %d: %v", i, err)
				return
			}
			j, ok, err := s.ClaimBy(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, queues.Claimant{Worker: "w1", Incarnation: "i1", Pool: "fixed"})
			if err != nil || !ok || j.ID != sub.Job.ID || j.Worker != "w1" {
				t.Errorf("claim %d: %+v %v %v", i, j, ok, err)
				return
			}
			code := 0
			if _, err := s.Finish(ctx, j, "w1", "succeeded", &code, ""); err != nil {
				t.Errorf("finish %d: %v", i, err)
			}
		})
	}
	wg.Wait()
}
