package sim

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// A fixed worker that dies: the policy sees it up with its jobs running
// for worker_ttl, then it leaves the capacity and its jobs are requeued
// to core, readmitted, resuming from their checkpoint before the death;
// they run again once it is back.
func TestFixedDeathRequeuesFromCheckpoint(t *testing.T) {
	var js []trace.Job
	for range 8 {
		j := coreJob(0, time.Hour)
		j.Checkpointable = true
		js = append(js, j)
	}
	die, down := 25*time.Minute, 30*time.Minute
	o := Options{
		Pools: []policy.Pool{quota(1)}, FixedSlots: 8, FixedWorkerSlots: 4, Tick: time.Second,
		CheckpointInterval: 10 * time.Minute,
		FixedDeaths:        []FixedDeath{{Worker: 1, At: die, Down: down}},
	}
	s, err := newSim(mkTrace(js...), o)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	s.check = func(s *sim, snap policy.Snapshot) error {
		if err := invariants(s, snap); err != nil {
			return err
		}
		queued := 0
		for _, j := range snap.Jobs {
			if j.State == "queued" {
				queued++
				if !j.Readmitted || j.Queue != policy.QueueCore {
					t.Errorf("at %v job %s is queued in %s, readmitted %v; want core, readmitted", s.now, j.ID, j.Queue, j.Readmitted)
				}
			}
		}
		switch now := s.now; {
		case now >= die && now < die+DefaultWorkerTTL:
			seen["silent"] = true
			if len(snap.Workers) != 2 || snap.Workers[1].Busy != 4 || queued != 0 {
				t.Errorf("at %v, before the death is detected, the policy sees %+v and %d queued; want both workers, full",
					now, snap.Workers, queued)
			}
		case now >= die+DefaultWorkerTTL && now < die+down:
			seen["down"] = true
			if len(snap.Workers) != 1 || queued != 4 {
				t.Errorf("at %v, while the worker is down, the policy sees %d workers and %d queued jobs; want 1 and 4",
					now, len(snap.Workers), queued)
			}
		}
		return nil
	}
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	r := s.result()
	if !seen["silent"] || !seen["down"] {
		t.Errorf("the run decided in only %v of the death's phases", seen)
	}
	// Each of the dead worker's 4 jobs checkpointed at 20 min and lost
	// the 5 min since; they resume with 40 min left when the worker is
	// back at 55 min.
	if r.FixedDeaths != 1 || r.Preemptions.Lost != 4 || !near(r.LostWork, 4*5.0/60, 1e-9) {
		t.Errorf("%d deaths, %d jobs lost, %v slot-hours lost; want 1, 4, %v", r.FixedDeaths, r.Preemptions.Lost, r.LostWork, 4*5.0/60)
	}
	if want := (die + down + 40*time.Minute).Seconds(); r.Jobs != 8 || r.SimulatedSeconds != want {
		t.Errorf("%d jobs finished, the last at %vs; want 8, at %vs", r.Jobs, r.SimulatedSeconds, want)
	}
}

// A job the policy stops on a worker it does not yet know is dead goes,
// once the death is detected, to the queue the policy asked for.
func TestFixedDeathKeepsThePolicysStop(t *testing.T) {
	loan := burstJob(0, time.Hour, true)
	loan.Template = "burst"
	cfg := policy.DefaultConfig()
	cfg.High = 1 // lend the one slot again once the core job is done
	o := Options{Config: cfg, Pools: []policy.Pool{quota(1)}, FixedSlots: 1, Tick: time.Second, CheckpointInterval: 10 * time.Minute,
		CheckpointOverhead: time.Minute, FixedDeaths: []FixedDeath{{Worker: 0, At: 30 * time.Minute, Down: time.Hour}}}
	// The core job arrives at the death: rule 1 reclaims the loan,
	// which the dead worker never winds down.
	tr := mkTrace(loan, coreJob(30*time.Minute, 10*time.Minute))
	s, err := newSim(tr, o)
	if err != nil {
		t.Fatal(err)
	}
	var reclaimed bool
	s.onAction = func(s *sim, a policy.Action) {
		reclaimed = reclaimed || a.Kind == policy.Reclaim
	}
	s.check = invariants
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	r := s.result()
	if !reclaimed || r.Preemptions.Reclaim != 1 || r.Preemptions.Lost != 0 || r.Jobs != 2 {
		t.Errorf("reclaimed %v; %+v, %d jobs; want one reclaim, no job lost to the death, 2 jobs", reclaimed, r.Preemptions, r.Jobs)
	}
	// Back at 90 min: the core job first (core before loan), then the
	// loan, lent again at the next tick, with 30 min left from its
	// checkpoint at the death.
	if want := (90*time.Minute + 10*time.Minute + 30*time.Minute).Seconds(); r.SimulatedSeconds != want {
		t.Errorf("the last job finished at %vs; want %vs", r.SimulatedSeconds, want)
	}
}

// Random deaths keep the model consistent before every Decide, and
// deciding on every tick gives the same result as deciding only when
// something changed.
func TestFixedDeathsKeepTheModelConsistent(t *testing.T) {
	tr := benchTrace(1500, 1, 5*time.Minute, 17)
	o := busyOptions()
	o.FixedWorkerSlots, o.FixedDeathRate, o.FixedDowntime = 5, 0.3, 20*time.Minute
	r := runChecked(t, tr, o)
	if r.Jobs != len(tr.Jobs) || r.FixedDeaths == 0 || r.Preemptions.Lost == 0 {
		t.Errorf("%d of %d jobs, %d deaths, %d jobs lost; want all jobs, some deaths and losses",
			r.Jobs, len(tr.Jobs), r.FixedDeaths, r.Preemptions.Lost)
	}
	every := runWith(t, tr, o, true, true)
	every.Decisions, r.Decisions = 0, 0
	if !reflect.DeepEqual(r, every) {
		t.Errorf("deciding on every tick gives\n%+v\nskipping\n%+v", every, r)
	}
	t.Logf("%d deaths, %d jobs lost, %.2f slot-hours lost", r.FixedDeaths, r.Preemptions.Lost, r.LostWork)
}

func TestFixedDeathsValidated(t *testing.T) {
	base := Options{Pools: []policy.Pool{quota(1)}, FixedSlots: 8, FixedWorkerSlots: 4}
	for _, c := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"no such worker", func(o *Options) { o.FixedDeaths = []FixedDeath{{Worker: 2, Down: time.Minute}} }, "fixed_deaths[0].worker is 2"},
		{"no downtime", func(o *Options) { o.FixedDeaths = []FixedDeath{{Worker: 0}} }, "downtime positive"},
		{"overlap", func(o *Options) {
			o.FixedDeaths = []FixedDeath{{Worker: 1, At: time.Hour, Down: time.Hour}, {Worker: 1, At: 90 * time.Minute, Down: time.Minute}}
		}, "while down since 1h0m0s"},
		{"rate without downtime", func(o *Options) { o.FixedDeathRate = 1 }, "fixed_downtime"},
		{"both", func(o *Options) {
			o.FixedDeathRate, o.FixedDowntime = 1, time.Minute
			o.FixedDeaths = []FixedDeath{{Worker: 0, Down: time.Minute}}
		}, "not both"},
		{"negative ttl", func(o *Options) { o.WorkerTTL = -time.Second }, "worker_ttl"},
	} {
		o := base
		c.edit(&o)
		if _, err := Run(mkTrace(coreJob(0, time.Minute)), o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want one saying %q", c.name, err, c.want)
		}
	}
}
