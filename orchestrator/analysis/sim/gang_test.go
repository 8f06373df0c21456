package sim

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

func gangJob(submit, dur time.Duration, n, k int) trace.Job {
	j := coreJob(submit, dur)
	j.Slots, j.Replicas = k, n
	return j
}

// A gang is one unit: placed by one Place naming every member's worker,
// started only when all of them have its slots free, at the same instant,
// and billed for every member.
func TestGangStartsWhole(t *testing.T) {
	two := Options{Pools: []policy.Pool{quota(1)}, FixedSlots: 4, FixedWorkerSlots: 2}
	one := Options{Pools: []policy.Pool{quota(1)}, FixedSlots: 4, FixedWorkerSlots: 4}
	small := Options{Pools: []policy.Pool{quota(1)}, FixedSlots: 8, FixedWorkerSlots: 4}
	for _, c := range []struct {
		name      string
		jobs      []trace.Job
		o         Options
		finished  int
		slotHours float64
		maxWait   time.Duration
	}{
		{"2x2 on two 2-slot workers", []trace.Job{gangJob(0, time.Hour, 2, 2)}, two, 1, 4, 0},
		// Two one-slot jobs fill one worker for an hour: the gang has a
		// free worker for one member but starts neither before both are
		// free.
		{"one worker busy", []trace.Job{coreJob(0, time.Hour), coreJob(0, time.Hour), gangJob(time.Second, time.Hour, 2, 2)},
			two, 3, 2 + 4, time.Hour - time.Second},
		{"members share a worker", []trace.Job{gangJob(0, time.Hour, 2, 2)}, one, 1, 4, 0},
		{"one-slot members", []trace.Job{gangJob(0, time.Hour, 3, 1)}, two, 1, 3, 0},
		// Three members of 3 fit no two 4-slot workers: it never starts,
		// and no member runs alone.
		{"fits nowhere", []trace.Job{gangJob(0, time.Hour, 3, 3)}, small, 0, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := newSim(mkTrace(c.jobs...), c.o)
			if err != nil {
				t.Fatal(err)
			}
			s.check = invariants
			if err := s.run(); err != nil {
				t.Fatal(err)
			}
			r := s.result()
			if r.Jobs != c.finished || r.SlotHours.Fixed != c.slotHours || r.CoreWait.Max != c.maxWait {
				t.Errorf("%d jobs, %v fixed slot-hours, waits %+v: want %d, %v, max %v",
					r.Jobs, r.SlotHours.Fixed, r.CoreWait, c.finished, c.slotHours, c.maxWait)
			}
			if c.finished > 0 && r.Actions[policy.Place] != 1 {
				t.Errorf("actions %v: want one place", r.Actions)
			}
		})
	}
}

// While a placed gang waits, no member runs: at every tick before the
// busy worker frees, the gang is queued and on no worker.
func TestGangWaitsWithNoMemberRunning(t *testing.T) {
	tr := mkTrace(coreJob(0, time.Hour), coreJob(0, time.Hour), gangJob(time.Second, time.Hour, 2, 2))
	s, err := newSim(tr, Options{Pools: []policy.Pool{quota(1)}, FixedSlots: 4, FixedWorkerSlots: 2})
	if err != nil {
		t.Fatal(err)
	}
	var started time.Duration = -1
	s.check = func(s *sim, snap policy.Snapshot) error {
		for i := range s.tasks {
			if g := &s.tasks[i]; g.gang() && g.state == tsRunning && started < 0 {
				started = s.now
			}
		}
		return invariants(s, snap)
	}
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	if started != time.Hour {
		t.Errorf("gang seen running first at %v, want 1h", started)
	}
}

// gangTrace is a random trace in which some sized jobs are gangs.
func gangTrace(n int, seed uint64) trace.Trace {
	tr := benchTrace(n, 1, 10*time.Minute, seed)
	for i := range tr.Jobs {
		if j := &tr.Jobs[i]; i%6 == 0 {
			j.Replicas = 2 + i%3
			j.Slots = 1 + i%4
		}
	}
	return tr
}

// Property: on a busy mix of gangs, sized and one-slot work, with spot
// reclaims, checkpoint overheads and workers of several sizes, no worker
// is ever over capacity and every gang runs on all its members' workers
// or on none (invariants checks both before every Decide).
func TestGangsAllOrNothing(t *testing.T) {
	skipUnderRace(t)
	tr := gangTrace(2500, 23)
	fixed := busyOptions()
	fixed.FixedSlots, fixed.FixedWorkerSlots = 32, 8
	elastic := AllElastic(busyOptions())
	for name, o := range map[string]Options{"fixed": fixed, "elastic": elastic} {
		t.Run(name, func(t *testing.T) {
			r := runChecked(t, tr, o)
			if r.Actions[policy.Place] == 0 || r.Jobs+r.Unfinished != len(tr.Jobs) || r.Jobs < len(tr.Jobs)/2 {
				t.Errorf("actions %v, %d finished, %d unfinished of %d", r.Actions, r.Jobs, r.Unfinished, len(tr.Jobs))
			}
		})
	}
}

// A spot reclaim of one member's worker stops the whole gang: every
// member's slots free, the work since the checkpoint is lost for every
// member, and the gang is placed again.
func TestGangSpotReclaimStopsAllMembers(t *testing.T) {
	var js []trace.Job
	for i := range 6 {
		g := burstJob(time.Duration(i)*time.Minute, 4*time.Hour, true)
		g.Slots, g.Replicas = 2, 2
		js = append(js, g)
	}
	o := AllElastic(Options{
		Pools:              []policy.Pool{spotPool(0.3, 2), onDemand(1, 2)},
		SpotReclaimRate:    0.5,
		CheckpointInterval: 15 * time.Minute,
		Seed:               3,
	})
	s, err := newSim(mkTrace(js...), o)
	if err != nil {
		t.Fatal(err)
	}
	s.check = invariants
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	r := s.result()
	if r.Preemptions.Spot == 0 || r.Jobs != 6 {
		t.Fatalf("preemptions %+v, %d jobs: want spot reclaims and all 6 done", r.Preemptions, r.Jobs)
	}
	// Each reclaim loses less than an interval on each of 4 slots.
	if maxLost := float64(r.Preemptions.Spot) * 4 * 0.25; !(r.LostWork > 0 && r.LostWork < maxLost) {
		t.Errorf("lost %v slot-hours over %d reclaims, want in (0, %v)", r.LostWork, r.Preemptions.Spot, maxLost)
	}
	// Work is done once on every slot plus what was lost.
	if want := 6*4*4 + r.LostWork; !near(r.SlotHours.Spot+r.SlotHours.OnDemand, want, 1e-9) {
		t.Errorf("slot-hours %+v, want %v in all", r.SlotHours, want)
	}
}

// The policy reclaims a borrowed gang whole for core work: both members'
// slots free at once, the gang loses the work since its checkpoint on
// every member and runs again once the core work is done.
func TestGangReclaimFreesEveryMember(t *testing.T) {
	g := burstJob(0, 4*time.Hour, true)
	g.Slots, g.Replicas = 2, 2
	js := []trace.Job{g}
	for range 6 {
		js = append(js, coreJob(time.Hour+5*time.Minute, time.Hour))
	}
	o := Options{
		Config:             policy.DefaultConfig(),
		Pools:              []policy.Pool{quota(0.1)},
		FixedSlots:         6,
		FixedWorkerSlots:   2,
		CheckpointInterval: 30 * time.Minute,
	}
	r := runChecked(t, mkTrace(js...), o)
	if r.Jobs != 7 || r.Preemptions.Reclaim != 1 {
		t.Fatalf("%d jobs, preemptions %+v, actions %v: want all 7 done and the gang reclaimed once", r.Jobs, r.Preemptions, r.Actions)
	}
	// Reclaimed at 1h05 after a checkpoint at 1h: 5 minutes lost on each
	// of its 4 slots.
	if want := 4 * (5 * time.Minute).Hours(); !near(r.LostWork, want, 1e-9) {
		t.Errorf("lost %v slot-hours, want %v", r.LostWork, want)
	}
	if r.CoreWait.Max != 0 {
		t.Errorf("core waits %+v: want none, the gang's slots all freed at once", r.CoreWait)
	}
}

// Rule 4 moves a checkpointable gang running on on-demand workers back to
// the quota once core work leaves it idle: the gang stops as one unit,
// resumes from its checkpoint on fixed workers and finishes there, so it
// is billed on-demand only until the move.
func TestGangMigratesBackToQuota(t *testing.T) {
	var js []trace.Job
	for range 6 {
		js = append(js, coreJob(0, time.Hour))
	}
	g := burstJob(time.Minute, 4*time.Hour, true)
	g.Slots, g.Replicas = 2, 2
	js = append(js, g)
	// Six fixed slots: the high watermark (0.7) leaves room for the
	// gang's four once the core work is gone.
	o := Hybrid(Options{Pools: []policy.Pool{quota(0.5), onDemand(2, 2)}, FixedSlots: 6, FixedWorkerSlots: 2,
		CheckpointInterval: 10 * time.Minute}, 0.7, 0.4)
	r := runChecked(t, mkTrace(js...), o)
	if r.Jobs != 7 || r.Preemptions.Migrate != 1 || r.Actions[policy.Migrate] != 1 {
		t.Fatalf("%d jobs, preemptions %+v, actions %v: want all 7 done and the gang migrated once", r.Jobs, r.Preemptions, r.Actions)
	}
	// The gang boots on-demand at 4 min and moves when the core work ends
	// at 1 h: under an hour on each of its 4 on-demand slots, and the rest
	// of its 4 hours (and what the move lost) on the quota.
	od := pool(t, r, "od")
	if od.SlotHours <= 0 || od.SlotHours > 4 {
		t.Errorf("on-demand slot-hours %v: want the gang's time before the move, under 4", od.SlotHours)
	}
	if r.SlotHours.Fixed < 6+4*3 {
		t.Errorf("fixed slot-hours %v: want the core hours and over 3 of the gang's hours on 4 slots", r.SlotHours.Fixed)
	}
}

// Rule 1 makes room for a queued core gang: the one-slot burst jobs lent
// to both fixed workers are reclaimed together and the gang starts on the
// freed workers at once, instead of waiting for the loans to finish.
func TestGangQueuedCoreReclaimsLoans(t *testing.T) {
	var js []trace.Job
	for range 4 {
		js = append(js, burstJob(0, 5*time.Hour, true))
	}
	js = append(js, gangJob(time.Hour, time.Hour, 2, 2))
	o := Options{Config: policy.DefaultConfig(), Pools: []policy.Pool{quota(0.1)}, FixedSlots: 4, FixedWorkerSlots: 2,
		CheckpointInterval: 10 * time.Minute}
	o.Config.High = 1 // lend every fixed slot
	r := runChecked(t, mkTrace(js...), o)
	if r.Jobs != 5 || r.Preemptions.Reclaim != 4 {
		t.Fatalf("%d jobs, preemptions %+v, actions %v: want all 5 done and the 4 loans reclaimed", r.Jobs, r.Preemptions, r.Actions)
	}
	if r.CoreWait.Max > time.Minute {
		t.Errorf("core waits %+v: want the gang started within a minute, not after the loans' 5 hours", r.CoreWait)
	}
}
