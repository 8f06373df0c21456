package sim

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// spotCase is 40 checkpointable burst jobs of 4 hours on elastic capacity
// only: a cheap spot pool and an on-demand pool for the jobs reclaimed too
// often.
func spotCase(rate float64, seed uint64) (trace.Trace, Options) {
	var js []trace.Job
	for i := range 40 {
		js = append(js, burstJob(time.Duration(i)*time.Minute, 4*time.Hour, true))
	}
	o := AllElastic(Options{
		Pools:              []policy.Pool{spotPool(0.3, 4), onDemand(1, 4)},
		SpotReclaimRate:    rate,
		CheckpointInterval: 15 * time.Minute,
		Seed:               seed,
	})
	return mkTrace(js...), o
}

func TestSpotReclaimsPreemptAndLoseWorkSinceCheckpoint(t *testing.T) {
	tr, o := spotCase(0.5, 1)
	r := mustRun(t, tr, o)

	if r.Preemptions.Spot == 0 || r.Preemptions.Reclaim != 0 || r.Preemptions.Migrate != 0 {
		t.Fatalf("preemptions %+v: want spot ones only", r.Preemptions)
	}
	// Each stop loses less than one checkpoint interval, and some lose
	// something.
	if maxLost := float64(r.Preemptions.Spot) * 0.25; !(r.LostWork > 0 && r.LostWork < maxLost) {
		t.Errorf("lost %v slot-hours over %d reclaims, want in (0, %v)", r.LostWork, r.Preemptions.Spot, maxLost)
	}
	if r.Jobs != 40 || r.Unfinished != 0 {
		t.Errorf("%d finished, %d unfinished: want all 40", r.Jobs, r.Unfinished)
	}
	// Work is done once plus what was lost: nothing else is run.
	if want := 40*4 + r.LostWork; !near(r.SlotHours.Spot+r.SlotHours.OnDemand, want, 1e-9) {
		t.Errorf("slot-hours %+v, want %v in all", r.SlotHours, want)
	}
	if u := pool(t, r, "spot"); u.Reclaimed == 0 {
		t.Errorf("spot pool %+v: no worker reclaimed", u)
	}

	tr, o = spotCase(0, 1)
	if r := mustRun(t, tr, o); r.Preemptions != (Preemptions{}) || r.LostWork != 0 || pool(t, r, "spot").Reclaimed != 0 {
		t.Errorf("rate 0: preemptions %+v, lost %v", r.Preemptions, r.LostWork)
	}
}

// Reclaims come at the configured rate per spot worker-hour.
func TestSpotReclaimRateIsPerWorkerHour(t *testing.T) {
	const rate = 0.3
	var js []trace.Job
	for i := range 2000 {
		js = append(js, burstJob(time.Duration(i)*3*time.Minute, 2*time.Hour, true))
	}
	o := AllElastic(Options{Pools: []policy.Pool{spotPool(0.3, 4)}, SpotReclaimRate: rate, CheckpointInterval: 10 * time.Minute, Seed: 3})
	o.Pools[0].MaxWorkers = 100
	o.Config.MaxSpotPreemptions = 1000 // keep every job on spot
	r := mustRun(t, mkTrace(js...), o)

	u := pool(t, r, "spot")
	// Workers are exposed from boot to release or reclaim.
	hours := u.WorkerHours - float64(u.Launched)*o.Pools[0].StartupDelay.Hours()
	want := rate * hours
	if sd := math.Sqrt(want); math.Abs(float64(u.Reclaimed)-want) > 4*sd {
		t.Errorf("%d reclaims over %.0f worker-hours, want %.0f ± %.0f", u.Reclaimed, hours, want, 4*sd)
	}
	t.Logf("%d reclaims over %.0f worker-hours (expected %.1f)", u.Reclaimed, hours, want)
}

func TestSameSeedSameResult(t *testing.T) {
	tr, o := spotCase(0.5, 7)
	a, b := mustRun(t, tr, o), mustRun(t, tr, o)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("same seed, different results:\n%+v\n%+v", a, b)
	}
	o.Seed = 8
	if c := mustRun(t, tr, o); reflect.DeepEqual(a, c) {
		t.Fatalf("seeds 7 and 8 gave the same result: %+v", c)
	}
}

// A job with a deadline is late if it finishes after it, or never.
func TestDeadlineMisses(t *testing.T) {
	onTime := coreJob(0, time.Hour)
	onTime.Deadline = 90 * time.Minute
	late := onTime // waits an hour for the single slot
	never := burstJob(0, time.Minute, true)
	never.Deadline = time.Hour // a high watermark of 0.7 lends no slot of 1
	plenty := coreJob(0, time.Minute)
	plenty.Deadline = 0 // no deadline: waits, but is never late
	r := mustRun(t, mkTrace(onTime, late, never, plenty), Options{Pools: []policy.Pool{quota(1)}, FixedSlots: 1})

	if r.DeadlineMisses != 2 || r.Unfinished != 1 || r.Jobs != 3 {
		t.Errorf("%d misses, %d unfinished, %d finished: want 2, 1, 3", r.DeadlineMisses, r.Unfinished, r.Jobs)
	}
}
