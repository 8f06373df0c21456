package policy

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Running jobs that share a GPU fill the slots their shares add up to,
// rounded up, not one slot each: two halves are one busy slot, three are
// two. A worker's own report still counts when it says more.
func TestSharesCountAsTheSlotsTheyFill(t *testing.T) {
	fx, _ := fixedWith(4, 0)
	w := worker("f1", "fx", 4, 0)
	w.Busy = 0 // a report older than the jobs
	half := func(id string) Job {
		j := running(id, jobs.ClassCore, w, ago(time.Minute))
		j.Share = 500
		return j
	}
	for _, c := range []struct {
		name     string
		jobs     []Job
		reported int
		want     int
	}{
		{"two halves", []Job{half("a"), half("b")}, 0, 1},
		{"three halves", []Job{half("a"), half("b"), half("c")}, 0, 2},
		{"three halves and a whole job", []Job{half("a"), half("b"), half("c"), running("d", jobs.ClassCore, w, ago(time.Minute))}, 0, 3},
		{"the worker reports more", []Job{half("a"), half("b")}, 2, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			ww := w
			ww.Busy = c.reported
			// Built by hand: snap would raise the report to a slot a job.
			s := Snapshot{Config: DefaultConfig(), Pools: fx, Workers: []Worker{ww}, Jobs: c.jobs}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := Load(s).Busy; got != c.want {
				t.Errorf("fixed busy %d, want %d", got, c.want)
			}
		})
	}
	bad := half("x")
	bad.Share = 1000
	if err := snap(fx, []Worker{w}, bad).Validate(); err == nil {
		t.Error("a share of a whole GPU passed validation")
	}
}

// Queued core shares wait for the slots they fill: four quarters fit the
// one free slot, so nothing borrowed is reclaimed for them.
func TestQueuedCoreSharesReclaimOnlyWhatTheyFill(t *testing.T) {
	fx, _ := fixedWith(4, 0)
	w := worker("f1", "fx", 4, 3)
	var js []Job
	for i := range 3 {
		js = append(js, running(string(rune('a'+i)), jobs.ClassBurst, w, ago(time.Minute)))
	}
	for i := range 4 {
		j := queued(string(rune('p'+i)), jobs.ClassCore, QueueCore, ago(time.Minute))
		j.Share = 250
		js = append(js, j)
	}
	s := snap(fx, []Worker{w}, js...)
	if p := Decide(s, t0); p.Count(Reclaim) != 0 {
		t.Errorf("four quarter-GPU core jobs and one free slot: %s", p)
	}
	if got := Load(s).QueuedCore; got != 1 {
		t.Errorf("queued core %d slots, want 1", got)
	}
}

// Shares that leave a worker free the slots that would empty, never more
// than it uses: four migrating quarters on one slot free that slot.
func TestLeavingSharesFreeWhatTheyFill(t *testing.T) {
	u := slotUse{shared: 1000, sharedLeaving: 1000}
	if got := u.slots(); got.used != 1 || got.leaving != 1 {
		t.Errorf("four quarters leaving: used %d, leaving %d; want 1 and 1", got.used, got.leaving)
	}
	u = slotUse{used: 1, shared: 1500, sharedLeaving: 250}
	if got := u.slots(); got.used != 3 || got.leaving != 0 || got.used-got.leaving < 0 {
		t.Errorf("1.5 GPUs of shares, a quarter leaving, beside a whole job: used %d, leaving %d", got.used, got.leaving)
	}
}
