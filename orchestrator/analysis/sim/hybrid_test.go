package sim

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// spike is 5 long core jobs holding half of 10 fixed slots (between the
// watermarks, so nothing migrates or drains) and, at 1 h, 14 burst jobs of
// 30 minutes: 2 are lent up to the high watermark (7 slots), 12 need three
// 4-slot on-demand workers.
func spike(od policy.Pool) (trace.Trace, Options) {
	var js []trace.Job
	for range 5 {
		js = append(js, coreJob(0, 6*time.Hour))
	}
	for range 14 {
		js = append(js, burstJob(time.Hour, 30*time.Minute, false))
	}
	return mkTrace(js...), Hybrid(Options{Pools: []policy.Pool{quota(0.5), od}, FixedSlots: 10}, 0.7, 0.4)
}

func TestSpikeLaunchesAfterStartupDelayAndReleasesAfterIdleTTL(t *testing.T) {
	const price = 2.0
	od := onDemand(price, 4) // 3 min start-up, 10 min idle TTL, per-second billing
	tr, o := spike(od)
	r := mustRun(t, tr, o)

	if r.Actions[policy.Lend] != 2 || r.Actions[policy.ScaleUp] != 1 || r.Actions[policy.Release] != 3 {
		t.Errorf("actions %v: want 2 lends, 1 scale-up, 3 releases", r.Actions)
	}
	if u := pool(t, r, "od"); u.Launched != 3 || u.PeakWorkers != 3 || r.PeakElasticWorkers != 3 {
		t.Errorf("od %+v, peak %d: want 3 workers", u, r.PeakElasticWorkers)
	}
	// The lent jobs start at the 1 h tick, the others when the workers
	// boot 3 minutes later.
	if r.ElasticWait.N != 14 || r.ElasticWait.P50 != 3*time.Minute || r.ElasticWait.Max != 3*time.Minute {
		t.Errorf("burst waits %+v: want 12 of 14 waiting the 3 min start-up", r.ElasticWait)
	}
	// Asked for at 1 h, idle from 1h33m (3 min boot + 30 min work), kept
	// for the 10 min TTL: each of the 3 workers of 4 slots is billed 43 min.
	if want := 3 * 4 * price * minutes(43).Hours(); !near(r.Cost.OnDemand, want, 1e-12) {
		t.Errorf("on-demand cost %v, want %v", r.Cost.OnDemand, want)
	}
	if u := pool(t, r, "od"); !near(u.WorkerHours, 3*minutes(43).Hours(), 1e-12) || !near(u.BilledHours, u.WorkerHours, 1e-12) {
		t.Errorf("od %+v: want 3 × 43 min lived and billed", u)
	}
	if r.Preemptions != (Preemptions{}) || r.Jobs != 19 {
		t.Errorf("preemptions %+v, %d jobs: want none, 19", r.Preemptions, r.Jobs)
	}
}

// With hourly billing an idle worker is kept, ready for more work, until
// ReleaseMargin (2 min) before the hour it paid for ends.
func TestSpikeReleasesBeforeTheNextBilledHour(t *testing.T) {
	const price = 2.0
	od := onDemand(price, 4)
	od.Billing = policy.BillingPerHour
	tr, o := spike(od)
	r := mustRun(t, tr, o)

	if r.Actions[policy.Release] != 3 {
		t.Fatalf("actions %v: want 3 releases", r.Actions)
	}
	// Released at 1h58m, one hour billed each; the run ends then.
	if want := 3 * 4 * price; !near(r.Cost.OnDemand, want, 1e-12) {
		t.Errorf("on-demand cost %v, want %v (one hour for each of 3 workers)", r.Cost.OnDemand, want)
	}
	u := pool(t, r, "od")
	if got, want := u.BilledHours, 3.0; !near(got, want, 1e-12) {
		t.Errorf("billed %v worker-hours, want %v", got, want)
	}
	if got, want := u.WorkerHours, 3*minutes(58).Hours(); !near(got, want, 1e-12) {
		t.Errorf("workers lived %v hours, want %v (released at 1h58m)", got, want)
	}
	if want := (6 * time.Hour).Seconds(); r.SimulatedSeconds != want {
		t.Errorf("span %vs, want %vs (the core jobs end last)", r.SimulatedSeconds, want)
	}
}

// reclaimCase: 4 fixed slots all lendable (high 1), 4 burst jobs of an
// hour lent at 0, and at 25 min two core jobs of 20 min that find no free
// slot. No elastic pools.
func reclaimCase(ckpt bool) (trace.Trace, Options) {
	js := []trace.Job{coreJob(25*time.Minute, 20*time.Minute), coreJob(25*time.Minute, 20*time.Minute)}
	for range 4 {
		js = append(js, burstJob(0, time.Hour, ckpt))
	}
	o := Hybrid(Options{Pools: []policy.Pool{quota(1)}, FixedSlots: 4}, 1, 0.4)
	o.CheckpointInterval, o.CheckpointOverhead = 10*time.Minute, time.Minute
	return mkTrace(js...), o
}

func TestCoreArrivalsReclaimLoanedSlots(t *testing.T) {
	tr, o := reclaimCase(true)
	r := mustRun(t, tr, o)

	// Two loans go back to burst, each losing the 5 minutes since its
	// 20-minute checkpoint, and keep their slots for the 1 minute overhead.
	if r.Preemptions != (Preemptions{Reclaim: 2}) || r.Actions[policy.Reclaim] != 2 {
		t.Fatalf("preemptions %+v, actions %v: want 2 reclaims", r.Preemptions, r.Actions)
	}
	if want := 2 * minutes(5).Hours(); !near(r.LostWork, want, 1e-12) {
		t.Errorf("lost work %v slot-hours, want %v", r.LostWork, want)
	}
	if want := 2 * minutes(1).Hours(); !near(r.OverheadSlotHours, want, 1e-12) {
		t.Errorf("overhead %v slot-hours, want %v", r.OverheadSlotHours, want)
	}
	if r.CoreWait.Max != time.Minute || r.CoreWait.N != 2 {
		t.Errorf("core waits %+v: want both to wait the 1 min overhead", r.CoreWait)
	}
	// The core jobs end at 46 min; the next tick lends the reclaimed jobs
	// again and they resume from 20 minutes, ending at 86 min.
	if r.SimulatedSeconds != minutes(86).Seconds() || r.Jobs != 6 {
		t.Errorf("span %vs, %d jobs: want 86 min, 6 jobs", r.SimulatedSeconds, r.Jobs)
	}
	// 2 × 60 (not reclaimed) + 2 × 26 (first attempts) + 2 × 40 (resumed) + 2 × 20 (core).
	if want := minutes(292).Hours(); !near(r.SlotHours.Fixed, want, 1e-12) {
		t.Errorf("fixed slot-hours %v, want %v", r.SlotHours.Fixed, want)
	}
}

// A job that cannot checkpoint loses everything since its start, and,
// having no checkpoint to write, hands its slot over at once.
func TestReclaimOfJobWithoutCheckpointLosesTheAttempt(t *testing.T) {
	tr, o := reclaimCase(false)
	r := mustRun(t, tr, o)

	if r.Preemptions.Reclaim != 2 {
		t.Fatalf("preemptions %+v: want 2 reclaims", r.Preemptions)
	}
	if want := 2 * minutes(25).Hours(); !near(r.LostWork, want, 1e-12) {
		t.Errorf("lost work %v slot-hours, want %v", r.LostWork, want)
	}
	if r.OverheadSlotHours != 0 || r.CoreWait.Max != 0 {
		t.Errorf("overhead %v, core waits %+v: want none", r.OverheadSlotHours, r.CoreWait)
	}
	// Restarted from zero when the core jobs end at 45 min: done at 105.
	if r.SimulatedSeconds != minutes(105).Seconds() {
		t.Errorf("span %vs, want 105 min", r.SimulatedSeconds)
	}
}
