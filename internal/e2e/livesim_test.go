package e2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/analysis/sim"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// liveScenario is a small day in 12 seconds: core work filling the two fixed
// slots, a burst spike that needs on-demand workers, an urgent core job that
// overflows to on-demand while the quota is full (its template allows
// urgentWait), a second smaller spike, and a late core job.
func liveScenario() trace.Trace {
	j := func(at, d float64, class jobs.Class) trace.Job {
		return trace.Job{Submit: secs(at), Duration: secs(d), Slots: 1, Class: class, Team: "t", Template: "hy-sleep"}
	}
	urgent := j(1, 1.5, jobs.ClassCore)
	urgent.Template = "hy-urgent"
	tr := trace.Trace{Name: "live-vs-sim", Jobs: []trace.Job{
		j(0, 4, jobs.ClassCore), j(0, 4, jobs.ClassCore),
		j(0.5, 2, jobs.ClassBurst), j(0.5, 2, jobs.ClassBurst), j(0.6, 2, jobs.ClassBurst), j(0.7, 2, jobs.ClassBurst),
		urgent,
		j(5, 1.5, jobs.ClassBurst), j(5, 1.5, jobs.ClassBurst),
		j(7, 2, jobs.ClassCore),
	}}
	trace.SortJobs(tr.Jobs)
	return tr
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// urgentWait is the hy-urgent template's core_max_wait; every other core job
// has the global 30 minutes, so in the scenario only hy-urgent overflows.
const urgentWait = 500 * time.Millisecond

// TestLiveAndSimulatedRunsAgree plays liveScenario on the real system (a
// fixed worker, `ballast worker` children for on-demand capacity, the
// controller with the capacity policy) and through the simulator with the
// same pools and tick, and reports how far the measures differ. The
// simulator leaves out process start-up, Redis round trips and the wake-up
// after a tick, so live waits run a little longer; the bounds below are what
// a planner may rely on.
func TestLiveAndSimulatedRunsAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	const startup = 500 * time.Millisecond
	pools := hybridElasticPools(2)
	od := pools["ondemand"]
	od.StartupDelay, od.MaxWorkers = jobs.Duration(startup), 5 // the spike's four and the overflow
	pools["ondemand"] = od
	r := newHybridRigWith(t, pools, 0.7, 0.4, func(c *config.Config) {
		c.Capacity.CoreOverflow = true
		urgent := c.Templates["hy-sleep"]
		w := jobs.Duration(urgentWait)
		urgent.CoreMaxWait = &w
		c.Templates["hy-urgent"] = urgent
	})
	r.startFixedWorker("fixed-1", 2)
	prov := r.localProvider(map[string]time.Duration{"ondemand": startup})
	r.startController("ctl-1", r.capacity(prov))

	tr := liveScenario()
	start := time.Now()
	ids := make([]string, len(tr.Jobs))
	for i, tj := range tr.Jobs {
		sleepUntil(start.Add(tj.Submit))
		ids[i] = r.submit(jobs.Submission{Template: tj.Template, IdempotencyKey: "live-" + strconv.Itoa(i), Class: string(tj.Class),
			Params: map[string]json.RawMessage{"seconds": json.RawMessage(strconv.FormatFloat(tj.Duration.Seconds(), 'f', -1, 64))}})
	}
	testenv.Eventually(t, 60*time.Second, "every job of the scenario succeeded", func() bool {
		for _, id := range ids {
			j := r.job(id)
			r.mustNotFail(j)
			if j.State != jobs.StateSucceeded {
				return false
			}
		}
		return true
	})
	var liveCore, liveBurst []time.Duration
	livePre := 0
	var liveOverflowed []string // templates of the core jobs that ran on on-demand
	for i, id := range ids {
		j := r.job(id)
		if tr.Jobs[i].Class == jobs.ClassCore && j.Pool != "fixed" {
			liveOverflowed = append(liveOverflowed, tr.Jobs[i].Template)
			if j.Pool != "ondemand" || j.Attempt != 2 {
				t.Errorf("overflowed core job %s ran in pool %q on attempt %d, want ondemand on 2", id, j.Pool, j.Attempt)
			}
		}
		w := j.StartedAt.Sub(j.CreatedAt)
		if tr.Jobs[i].Class == jobs.ClassCore {
			liveCore = append(liveCore, w)
		} else {
			liveBurst = append(liveBurst, w)
		}
		livePre += j.Preemptions
	}
	liveLaunches := len(listInstances(t, prov))

	o := sim.Options{Config: r.cfg.PolicyConfig(), FixedSlots: 2, FixedPricePerSlotHour: 1, Tick: hyTick, Seed: 1,
		CoreMaxWaitByTemplate: r.cfg.CoreMaxWaitByTemplate()}
	for _, p := range r.cfg.PolicyPools() {
		if p.Kind != policy.PoolFixed {
			o.Pools = append(o.Pools, p)
		}
	}
	res, err := sim.Run(tr, o)
	if err != nil {
		t.Fatal(err)
	}
	simLaunches := 0
	for _, p := range res.Pools {
		simLaunches += p.Launched
	}
	simPre := res.Preemptions.Reclaim + res.Preemptions.Migrate + res.Preemptions.Spot

	lb, lc := summarize(liveBurst), summarize(liveCore)
	t.Logf("\n%-22s %10s %10s %10s\n%-22s %10s %10s %10s\n%-22s %10s %10s %10s\n%-22s %10s %10s %10s\n%-22s %10d %10d %10d\n%-22s %10d %10d %10d",
		"measure", "live", "simulated", "difference",
		"burst wait p50", ms(lb.p50), ms(res.ElasticWait.P50), ms(lb.p50-res.ElasticWait.P50),
		"burst wait max", ms(lb.max), ms(res.ElasticWait.Max), ms(lb.max-res.ElasticWait.Max),
		"core wait max", ms(lc.max), ms(res.CoreWait.Max), ms(lc.max-res.CoreWait.Max),
		"on-demand launches", liveLaunches, simLaunches, liveLaunches-simLaunches,
		"preemptions", livePre, simPre, livePre-simPre)

	// The same job overflows in both: live, the only core job off the quota
	// is hy-urgent's; simulated, there is one overflow, and none once the
	// template's own wait is taken away, so it was hy-urgent's too.
	if !slices.Equal(liveOverflowed, []string{"hy-urgent"}) {
		t.Errorf("live, the core jobs off the quota were of templates %v, want [hy-urgent]", liveOverflowed)
	}
	if n := res.Actions[policy.Overflow]; n != 1 {
		t.Errorf("simulated overflows: %d, want 1", n)
	}
	without := o
	without.CoreMaxWaitByTemplate = nil
	if res2, err := sim.Run(tr, without); err != nil || res2.Actions[policy.Overflow] != 0 {
		t.Errorf("without hy-urgent's own wait the simulation overflowed %d jobs (%v), want 0", res2.Actions[policy.Overflow], err)
	}
	t.Logf("overflows: live %v, simulated %d", liveOverflowed, res.Actions[policy.Overflow])

	if d := liveLaunches - simLaunches; d < -1 || d > 1 {
		t.Errorf("live launched %d on-demand workers, the simulation %d", liveLaunches, simLaunches)
	}
	// Live waits include a worker process booting after its start-up delay
	// and a poll interval; a second covers both on this machine.
	for _, c := range []struct {
		name       string
		live, simd time.Duration
	}{{"burst wait p50", lb.p50, res.ElasticWait.P50}, {"burst wait max", lb.max, res.ElasticWait.Max}, {"core wait max", lc.max, res.CoreWait.Max}} {
		if d := c.live - c.simd; d < -time.Second || d > 1500*time.Millisecond {
			t.Errorf("%s: live %s, simulated %s", c.name, c.live, c.simd)
		}
	}
	if res.Jobs != len(tr.Jobs) || res.Unfinished != 0 {
		t.Errorf("the simulation finished %d of %d jobs", res.Jobs, len(tr.Jobs))
	}
}

type waitSummary struct{ p50, max time.Duration }

func summarize(ws []time.Duration) waitSummary {
	if len(ws) == 0 {
		return waitSummary{}
	}
	s := slices.Clone(ws)
	slices.SortFunc(s, cmp.Compare[time.Duration])
	return waitSummary{p50: s[(len(s)-1)/2], max: s[len(s)-1]}
}

func ms(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }
