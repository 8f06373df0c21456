package sim

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/policy"
)

// A job of 3 slots on 2 fixed slots runs as 3 one-slot tasks: two start at
// once, the third when one of them ends. The job starts when its last slot
// does and finishes when its last slot does.
func TestMultiSlotJobRunsAsOneSlotTasks(t *testing.T) {
	j := coreJob(0, time.Hour)
	j.Slots, j.Deadline = 3, 90*time.Minute
	r := mustRun(t, mkTrace(j), Options{Pools: []policy.Pool{quota(1)}, FixedSlots: 2})

	if r.Jobs != 1 || r.CoreWait.N != 1 || r.CoreWait.Max != time.Hour {
		t.Errorf("%d jobs, waits %+v: want one job waiting an hour for its third slot", r.Jobs, r.CoreWait)
	}
	if r.SlotHours.Fixed != 3 || r.SimulatedSeconds != (2*time.Hour).Seconds() || r.DeadlineMisses != 1 {
		t.Errorf("slot-hours %v, span %vs, %d misses: want 3, 2 h, 1", r.SlotHours.Fixed, r.SimulatedSeconds, r.DeadlineMisses)
	}
	if got := r.Templates; len(got) != 1 || got[0].Template != "core" || got[0].Jobs != 1 || got[0].SlotHours != 3 ||
		len(got[0].ByDay) != 1 || got[0].ByDay[0] != 3 || got[0].SlotHoursPerDay != 3*12 {
		t.Errorf("templates %+v", got)
	}
}

// Slot time is split across days for the planner's per-day figures.
func TestTemplateHoursSplitByDay(t *testing.T) {
	j := coreJob(23*time.Hour, 2*time.Hour)
	r := mustRun(t, mkTrace(j), Options{Pools: []policy.Pool{quota(1)}, FixedSlots: 1})
	if got := r.Templates[0].ByDay; len(got) != 2 || got[0] != 1 || got[1] != 1 {
		t.Errorf("by day %v, want [1 1]", got)
	}
}
