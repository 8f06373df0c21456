package policy

import (
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// A core job of a flavor whose quota is full waits for that quota only
// until its max wait, then overflows like any core job, though another
// flavor's worker is idle and the count of free fixed slots says none is
// short. It used to be held on its flavor's worker for as long as the
// work there ran (weeks, in the Alibaba trace), whatever core_max_wait
// said. Before its wait is up it is held there, as before.
func TestOverflowACoreJobItsFlavorHasNoRoomFor(t *testing.T) {
	pools := []Pool{fixedPool("fx", "eu"), elasticPool("od", PoolOnDemand, "", 1.2)}
	pools[1].Labels = map[string]string{"gpu_model": "T4"}
	a100, t4 := worker("a100", "fx", 4, 0), worker("t4", "fx", 2, 2)
	a100.Labels, t4.Labels = map[string]string{"gpu_model": "A100"}, map[string]string{"gpu_model": "T4"}
	on := func(s Snapshot) Snapshot { s.Config.CoreOverflow = true; return s }
	job := func(waited time.Duration) Job {
		j := queued("c1", jobs.ClassCore, QueueCore, ago(waited))
		j.Requires = map[string]string{"gpu_model": "T4"}
		return j
	}
	runPlaceCases(t, []planCase{
		{"past its wait: it overflows", on(snap(pools, []Worker{a100, t4}, job(31*time.Minute))), t0, "overflow(c1,od) scale_up(od,1)"},
		{"within its wait: held on its flavor's worker", on(snap(pools, []Worker{a100, t4}, job(time.Minute))), t0, "place(c1,t4)"},
		{"without core overflow: held", snap(pools, []Worker{a100, t4}, job(31*time.Minute)), t0, "place(c1,t4)"},
	})
}

// A core job held on a fixed worker whose slots are still taken gives up
// the reservation once its max wait is past (rule 8's Unplace), and
// overflows on the next tick instead of being held again. One whose slots
// are free now is about to start, and stays.
func TestHeldCoreJobPastItsWaitOverflows(t *testing.T) {
	pools := []Pool{fixedPool("fx", "eu"), elasticPool("od", PoolOnDemand, "", 1.2)}
	held := func(busy int) Snapshot {
		w := worker("f1", "fx", 2, busy)
		j := queued("c1", jobs.ClassCore, QueueCore, ago(40*time.Minute))
		j.Slots, j.Placed, j.PlacedAt = 2, []string{"f1"}, ago(35*time.Minute)
		s := snap(pools, []Worker{w}, j)
		s.Config.CoreOverflow = true
		return s
	}
	s := held(1)
	p := Decide(s, t0)
	if got := placeSummary(p); got != "unplace(c1)" {
		t.Fatalf("held past its wait: got %s, want unplace(c1)\n%s", got, p)
	}
	// The take-back lands: the job waits unplaced, and goes to on-demand.
	s.Jobs[0].Placed, s.Jobs[0].PlacedAt = nil, time.Time{}
	if got := placeSummary(Decide(s, t0)); got != "overflow(c1,od) scale_up(od,1)" {
		t.Fatalf("after the take-back: got %s, want overflow(c1,od) scale_up(od,1)", got)
	}
	if p := Decide(held(0), t0); !p.Empty() {
		t.Fatalf("slots free now: want nothing, got\n%s", p)
	}
}

// With the on-demand pool at its maximum the job cannot overflow, so it
// keeps to its reservation past its wait: left unheld, the one-slot work
// behind it would take every slot the quota frees first.
func TestHeldCoreJobStaysHeldWhenOnDemandIsFull(t *testing.T) {
	od := elasticPool("od", PoolOnDemand, "", 1.2)
	od.MaxWorkers = 1
	pools := []Pool{fixedPool("fx", "eu"), od}
	f1, o1 := worker("f1", "fx", 2, 1), worker("o1", "od", 4, 0)
	var busy []Job
	for _, id := range []string{"b1", "b2", "b3", "b4"} {
		j := running(id, jobs.ClassCore, o1, ago(time.Hour))
		j.Queue, j.Checkpointable = QueueOverflow, false
		busy = append(busy, j)
	}
	job := queued("c1", jobs.ClassCore, QueueCore, ago(40*time.Minute))
	job.Slots = 2
	on := func(s Snapshot) Snapshot { s.Config.CoreOverflow = true; return s }
	runPlaceCases(t, []planCase{
		{"unplaced: it is held", on(snap(pools, []Worker{f1, o1}, append(slices.Clone(busy), job)...)), t0, "place(c1,f1)"},
	})
	held := job
	held.Placed, held.PlacedAt = []string{"f1"}, ago(35*time.Minute)
	if p := Decide(on(snap(pools, []Worker{f1, o1}, append(slices.Clone(busy), held)...)), t0); !p.Empty() {
		t.Fatalf("held with on-demand full: want nothing, got\n%s", p)
	}
}
