package sim

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// A job of k slots is one unit: it starts only when one worker has k free
// slots, through the policy's Place on the tick after it arrives. Until
// then the worker it is placed on holds the slots for it as they free and
// takes no one-slot work, so a one-slot job that arrives later waits too.
func TestSizedJobStartsWhole(t *testing.T) {
	big := coreJob(0, time.Hour)
	big.Slots, big.Deadline = 3, 90*time.Minute
	late := coreJob(5*time.Minute, time.Hour)
	tr := mkTrace(coreJob(0, 30*time.Minute), coreJob(0, 30*time.Minute), big, late)
	r := runChecked(t, tr, Options{Pools: []policy.Pool{quota(1)}, FixedSlots: 4})

	if r.Jobs != 4 || r.CoreWait.N != 4 || r.CoreWait.Max != 30*time.Minute {
		t.Errorf("%d jobs, waits %+v: want the 3-slot job to wait 30m for its slots", r.Jobs, r.CoreWait)
	}
	// 2 x 0.5 h, 3 slots x 1 h, 1 h: 5 slot-hours; the late job ends at 1h30.
	if r.SlotHours.Fixed != 5 || r.SimulatedSeconds != (90*time.Minute).Seconds() || r.DeadlineMisses != 0 {
		t.Errorf("slot-hours %v, span %vs, %d misses: want 5, 1h30, 0", r.SlotHours.Fixed, r.SimulatedSeconds, r.DeadlineMisses)
	}
	if r.Actions[policy.Place] != 1 {
		t.Errorf("actions %v: want one place", r.Actions)
	}
}

// A k-slot job waits for k free slots on one worker, not for k free slots
// in all: with the quota as two workers of 4 slots, it is reserved on the
// one with 3 free (busy for an hour); when the other frees all 4 at 30
// minutes, the reservation moves there and the job starts. A job bigger
// than every worker never starts.
func TestSizedJobNeedsOneWorker(t *testing.T) {
	var js []trace.Job
	for range 4 {
		js = append(js, coreJob(0, 30*time.Minute)) // fill w0
	}
	js = append(js, coreJob(time.Second, time.Hour)) // on w1, 3 left free
	four := coreJob(2*time.Second, time.Hour)
	four.Slots = 4
	js = append(js, four)
	o := Options{Pools: []policy.Pool{quota(1)}, FixedSlots: 8, FixedWorkerSlots: 4}
	r := runChecked(t, mkTrace(js...), o)
	if r.Jobs != 6 || r.CoreWait.Max != 30*time.Minute-2*time.Second || r.Actions[policy.Place] != 2 {
		t.Errorf("%d jobs, waits %+v, actions %v: want the 4-slot job placed twice, moved to w0 when it freed after 30m-2s",
			r.Jobs, r.CoreWait, r.Actions)
	}

	five := coreJob(0, time.Hour)
	five.Slots = 5
	r = runChecked(t, mkTrace(five, coreJob(0, time.Hour)), o)
	if r.Jobs != 1 || r.Unfinished != 1 {
		t.Errorf("%d finished, %d unfinished: want the 5-slot job on 4-slot workers never to start", r.Jobs, r.Unfinished)
	}
}

// The quota as workers of a size, with sized work on them and on elastic
// workers, keeps every worker within its slots at every tick (invariants
// checks that, and that a placed job waits only while it does not fit).
func TestSizedWorkersNeverOverCapacity(t *testing.T) {
	tr := benchTrace(3000, 1, 10*time.Minute, 17)
	o := busyOptions()
	o.FixedSlots, o.FixedWorkerSlots = 32, 8
	r := runChecked(t, tr, o)
	if r.Actions[policy.Place] == 0 || r.Jobs == 0 {
		t.Errorf("the case exercises too little: actions %v, %d jobs", r.Actions, r.Jobs)
	}
}

// runChecked runs tr under o with the model's invariants checked before
// every Decide.
func runChecked(t *testing.T, tr trace.Trace, o Options) Result {
	t.Helper()
	s, err := newSim(tr, o)
	if err != nil {
		t.Fatal(err)
	}
	s.check = invariants
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	return s.result()
}

// Slot time is split across days for the planner's per-day figures.
func TestTemplateHoursSplitByDay(t *testing.T) {
	j := coreJob(23*time.Hour, 2*time.Hour)
	r := mustRun(t, mkTrace(j), Options{Pools: []policy.Pool{quota(1)}, FixedSlots: 1})
	if got := r.Templates[0].ByDay; len(got) != 2 || got[0] != 1 || got[1] != 1 {
		t.Errorf("by day %v, want [1 1]", got)
	}
}
