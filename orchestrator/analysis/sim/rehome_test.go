package sim

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// TestRehomeIsANoOpOnTheModelsOneBurstQueue: the model's snapshot never
// says which elastic queue a job waits in, so a rehome changes nothing of
// a queued burst task, and one for a core task is refused as a policy bug.
func TestRehomeIsANoOpOnTheModelsOneBurstQueue(t *testing.T) {
	// One fixed slot: the first core task runs, the second waits in core.
	tr := mkTrace(burstJob(0, time.Hour, true), coreJob(0, time.Hour), coreJob(0, time.Hour))
	s, err := newSim(tr, Options{Pools: []policy.Pool{quota(0.5), spotPool(0.3, 2)}, FixedSlots: 1})
	if err != nil {
		t.Fatal(err)
	}
	for range tr.Jobs {
		s.arrive()
	}
	for _, j := range s.snapshot().Jobs {
		if j.Home != (policy.ElasticHome{}) {
			t.Fatalf("job %s has an elastic home %s in the model", j.ID, j.Home)
		}
	}
	var burstID, coreID string
	for i := range s.tasks {
		if s.tasks[i].core && s.tasks[i].state == tsQueued {
			coreID = s.tasks[i].id
		} else if !s.tasks[i].core {
			burstID = s.tasks[i].id
		}
	}
	before := s.tasks[parseID('j', burstID)]
	home := policy.ElasticHome{Known: true, OnDemand: true}
	if err := s.carryOut(policy.Action{Kind: policy.Rehome, Job: burstID, Queue: policy.QueueBurst, Home: home}); err != nil {
		t.Fatalf("rehome of a queued burst task: %v", err)
	}
	if after := s.tasks[parseID('j', burstID)]; !reflect.DeepEqual(after, before) {
		t.Fatalf("rehome changed the task: %+v -> %+v", before, after)
	}
	err = s.carryOut(policy.Action{Kind: policy.Rehome, Job: coreID, Queue: policy.QueueBurst, Home: home})
	if err == nil || !strings.Contains(err.Error(), "not in burst") {
		t.Fatalf("rehome of a core task: %v, want a refusal", err)
	}
}
