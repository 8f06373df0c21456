package sim

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// All fixed, arrivals never above capacity: nothing waits, the quota costs
// slots × price × span whatever the use, and the idle share is what the
// busy slot-hours leave.
func TestAllFixedBelowCapacity(t *testing.T) {
	const c, price, n = 4, 0.5, 20
	var js []trace.Job
	for i := range n {
		// One every 10 minutes for 30 minutes: three at once at most, since
		// a job ending as the next arrives frees its slot first.
		js = append(js, coreJob(time.Duration(i)*10*time.Minute, 30*time.Minute))
	}
	r := mustRun(t, mkTrace(js...), Options{Pools: []policy.Pool{quota(price)}, FixedSlots: c})

	span := time.Duration(n-1)*10*time.Minute + 30*time.Minute
	if r.SimulatedSeconds != span.Seconds() {
		t.Fatalf("span %vs, want %v", r.SimulatedSeconds, span)
	}
	if want := c * price * span.Hours(); r.Cost.Fixed != want || r.Cost.Total != want {
		t.Errorf("cost %+v, want fixed = total = %v", r.Cost, want)
	}
	busy := float64(n) * 0.5
	if want := 1 - busy/(c*span.Hours()); !near(r.FixedIdleShare, want, 1e-12) {
		t.Errorf("idle share %v, want %v", r.FixedIdleShare, want)
	}
	if r.SlotHours.Fixed != busy {
		t.Errorf("fixed slot-hours %v, want %v", r.SlotHours.Fixed, busy)
	}
	if r.CoreWait.Max != 0 || r.CoreWait.N != n || r.Jobs != n {
		t.Errorf("core wait %+v over %d finished jobs; want no wait over %d", r.CoreWait, r.Jobs, n)
	}
}

// All elastic, per-second billing with a 60 s minimum and no start-up
// delay: each worker is released at the first tick after it empties, and
// costs max(lifetime, 60 s) × price.
func TestAllElasticPerSecondBilling(t *testing.T) {
	const price = 1.2
	od := onDemand(price, 1)
	od.MinBilling, od.StartupDelay, od.IdleTTL = time.Minute, 0, 0
	tr := mkTrace(
		burstJob(0, 25*time.Second, false),
		burstJob(0, 100*time.Second, false),
		burstJob(300*time.Second, 30*time.Second, false),
	)
	r := mustRun(t, tr, AllElastic(Options{Pools: []policy.Pool{od}, FixedSlots: 8}))

	// By hand, with 10 s ticks: both first jobs scale up at 0 and start at
	// once. The 25 s job's worker goes at the 30 s tick (lived 30 s, billed
	// the 60 s minimum), the 100 s job's at 100 s (billed 100 s). The third
	// job launches its worker at 300 s, ends at 330 s, and the worker goes
	// then (billed 60 s).
	billed := (60 + 100 + 60) * time.Second
	if want := billed.Hours() * price; !near(r.Cost.OnDemand, want, 1e-12) || !near(r.Cost.Total, want, 1e-12) {
		t.Errorf("cost %+v, want on-demand = total = %v", r.Cost, want)
	}
	if u := pool(t, r, "od"); u.Launched != 3 || !near(u.BilledHours, billed.Hours(), 1e-12) || u.PeakWorkers != 2 {
		t.Errorf("od usage %+v, want 3 launched, %v billed, peak 2", u, billed)
	}
	if r.Cost.Fixed != 0 || r.FixedSlots != 0 || r.ElasticWait.Max != 0 || r.Jobs != 3 {
		t.Errorf("result %+v: want no quota, no wait, 3 jobs", r)
	}
	if r.SimulatedSeconds != 330 {
		t.Errorf("span %vs, want 330 s (the last release)", r.SimulatedSeconds)
	}
}

// erlangC is the probability that an arrival waits in an M/M/c queue with
// offered load a = λ/μ.
func erlangC(c int, a float64) float64 {
	sum, term := 0.0, 1.0 // term = a^k / k!
	for k := range c {
		if k > 0 {
			term *= a / float64(k)
		}
		sum += term
	}
	top := term * a / float64(c) * float64(c) / (float64(c) - a) // a^c/c! × c/(c-a)
	return top / (sum + top)
}

// An M/M/c queue on the quota: Poisson core arrivals, exponential run
// times, c slots at utilization 0.5. Over a long run the measured
// utilization is λ/(cμ) and the mean wait the Erlang C value.
func TestMMcQueue(t *testing.T) {
	const (
		c    = 4
		rho  = 0.5
		n    = 200_000
		mean = 10 * time.Minute
	)
	mu := 1 / mean.Minutes()        // per minute
	lambda := rho * float64(c) * mu // per minute
	rng := rand.New(rand.NewPCG(42, 42))
	js := make([]trace.Job, n)
	var at float64
	for i := range js {
		at += rng.ExpFloat64() / lambda
		js[i] = coreJob(minutes(at), max(minutes(rng.ExpFloat64()/mu), time.Nanosecond))
	}
	// Core work starts on arrival whatever the tick, and nothing else
	// happens, so a long tick only saves Decide calls.
	r := mustRun(t, mkTrace(js...), Options{Pools: []policy.Pool{quota(1)}, FixedSlots: c, Tick: time.Hour})

	if u := 1 - r.FixedIdleShare; math.Abs(u-rho) > 0.02 {
		t.Errorf("utilization %.4f, want %.2f ± 0.02", u, rho)
	}
	pw := erlangC(c, lambda/mu)
	wq := pw / (float64(c)*mu - lambda) // minutes
	if got := r.CoreWait.Mean.Minutes(); math.Abs(got-wq) > 0.1*wq {
		t.Errorf("mean wait %.4f min, want Erlang C %.4f min ± 10%%", got, wq)
	}
	// Most arrivals find a free slot: 1 - C(c, a) of them.
	if r.CoreWait.P50 != 0 || r.CoreWait.P95 == 0 {
		t.Errorf("waits %+v: want p50 0 (P(wait) = %.2f) and p95 > 0", r.CoreWait, pw)
	}
	t.Logf("utilization %.4f (%.2f), mean wait %.3f min (Erlang C %.3f), decisions %d",
		1-r.FixedIdleShare, rho, r.CoreWait.Mean.Minutes(), wq, r.Decisions)
}
