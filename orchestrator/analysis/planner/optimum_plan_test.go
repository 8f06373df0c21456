package planner

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/sim"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// gpuLikeTrace is six days of GPU-cluster-like work: long jobs (a median
// of two hours, some over a day) of 1 to 8 slots, half of them core, with
// a busy last two days so that the tuning window is unlike the rest.
func gpuLikeTrace(seed uint64) trace.Trace {
	r := rand.New(rand.NewPCG(seed, 7))
	tr := trace.Trace{Name: "gpu-like"}
	for at := time.Duration(0); at < 6*24*time.Hour; {
		rate := 1.0 // jobs an hour
		if at > 4*24*time.Hour {
			rate = 2.5
		}
		at += time.Duration(r.ExpFloat64() / rate * float64(time.Hour))
		hours := math.Exp(r.NormFloat64()*1.1 + math.Log(2))
		j := trace.Job{Submit: at, Duration: time.Duration(min(hours, 72) * float64(time.Hour)), Slots: 1 << r.IntN(4),
			Class: jobs.ClassBurst, Template: "train", Checkpointable: r.IntN(2) == 0}
		if r.IntN(2) == 0 {
			j.Class, j.Template = jobs.ClassCore, "prod"
		}
		tr.Jobs = append(tr.Jobs, j)
	}
	trace.SortJobs(tr.Jobs)
	return tr
}

// The planner's pick on a trace of the kind the public GPU traces are, at
// fixed/elastic price ratios of 0.4 and 0.7: feasible on the whole history,
// no dearer than all fixed or all elastic, near the offline optimum, and
// the cheapest quota for its settings by brute force over every quota.
func TestPlanOnLongGPUJobsFindsTheBestQuota(t *testing.T) {
	tr := gpuLikeTrace(3)
	// Elastic GPU machines of 8, as the clouds rent them: a job of k
	// slots needs k on one worker, so one-GPU workers would run none of
	// the larger jobs.
	prices := func(elastic float64) sim.Options {
		o := benchPrices(elastic)
		o.Pools[0].SlotsPerWorker = 8
		return o
	}
	for _, elastic := range []float64{2.5, 1 / 0.7} {
		p, err := Make(tr, Options{Sim: prices(elastic), TuneDays: 2})
		if err != nil {
			t.Fatal(err)
		}
		r := p.Recommended
		t.Logf("ratio %.1f, %d simulations: %s", 1/elastic, p.Simulations, p.VerdictLine())
		if !r.Feasible || r.CoreWaitP95S > p.WaitTarget.Seconds() || r.BurstWaitP95S > p.WaitTarget.Seconds() {
			t.Fatalf("ratio %.1f: the pick is not feasible: %+v", 1/elastic, r)
		}
		if r.Cost > p.AllFixed.Cost.Total || r.Cost > p.AllElastic.Cost.Total {
			t.Errorf("ratio %.1f: the pick %.2f is dearer than all fixed %.2f or all elastic %.2f", 1/elastic, r.Cost,
				p.AllFixed.Cost.Total, p.AllElastic.Cost.Total)
		}
		// The offline optimum moves work between fixed and elastic
		// capacity for free the instant demand crosses the quota; the live
		// policy boots workers for two minutes, idles them five before
		// release, leaves a job where it started until the low watermark,
		// and loses work when it reclaims a lent job. On long jobs that
		// costs a few percent, and on this trace, with half the burst jobs
		// unable to checkpoint, over ten. The optimum also splits a job's
		// slots freely, where the simulator starts a job of k slots whole on
		// one worker of 8 and bills the worker's idle slots beside it: on
		// this trace that costs about half as much again. The bound only
		// catches a pick that is plainly wrong (all fixed here is 2.3x).
		if r.OfOptimum > 1.75 || r.OfOptimum < 1 {
			t.Errorf("ratio %.1f: the pick costs %.3fx the offline optimum", 1/elastic, r.OfOptimum)
		}
		if p.Best.Strategy != StrategyHybrid {
			continue
		}
		ev := newEvaluator(tr, tr, prices(elastic), p.WaitTarget, 0, nil)
		var cs []Candidate
		for q := 0; q <= p.Peak; q++ {
			c := p.Best.Candidate
			c.FixedSlots = q
			cs = append(cs, c)
		}
		pts, err := ev.eval(cs...)
		if err != nil {
			t.Fatal(err)
		}
		bf := topDistinct(pts, 1)[0]
		// The search tunes on the last days and settles within a few
		// percent of the cheapest quota: with jobs started whole on
		// workers of 8, cost is no longer smooth in the quota.
		if r.Cost > bf.Result.Cost.Total*1.05 {
			t.Errorf("ratio %.1f: the pick (%d slots) costs %.2f; brute force finds %d slots at %.2f", 1/elastic,
				p.Best.FixedSlots, r.Cost, bf.FixedSlots, bf.Result.Cost.Total)
		}
	}
}
