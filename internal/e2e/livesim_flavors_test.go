package e2e

import (
	"encoding/json"
	"math"
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
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers"
)

var (
	modelA100 = map[string]string{queues.LabelGPUModel: "A100"}
	modelT4   = map[string]string{queues.LabelGPUModel: "T4"}
)

// flavorScenario is five seconds on two GPU models and two machine
// sizes: an A100 machine of 4 GPUs and a T4 machine of 2. A 4-GPU A100 job
// fills the A100 machine for 3 s, so a 1-GPU A100 job waits for it
// although a T4 GPU is free; a 2-GPU T4 job waits for the T4 machine to
// empty; a job that requires no model takes the free T4 GPU at once; a
// late T4 job waits for the T4 machine while A100 GPUs are free. The
// 1-GPU A100 job is submitted before the 2-GPU T4 job, so it is the one
// that reserves (one reservation per worker group), live and simulated.
func flavorScenario() trace.Trace {
	j := func(at, d float64, slots int, model map[string]string) trace.Job {
		tmpl := "hy-sleep"
		switch model[queues.LabelGPUModel] {
		case "A100":
			tmpl = "ls-a100"
		case "T4":
			tmpl = "ls-t4"
		}
		return trace.Job{Submit: secs(at), Duration: secs(d), Slots: slots, Class: jobs.ClassCore, Team: "t",
			Template: tmpl, Requires: model}
	}
	tr := trace.Trace{Name: "live-vs-sim-flavors", Jobs: []trace.Job{
		j(0, 3, 4, modelA100), j(0, 3, 1, modelT4),
		j(0.4, 1, 1, modelA100),
		j(0.6, 1, 2, modelT4),
		j(1, 1, 1, nil),
		j(3.5, 1, 1, modelT4),
	}}
	trace.SortJobs(tr.Jobs)
	return tr
}

// flavorWorker is the live worker each job of flavorScenario must run on.
var flavorWorker = []string{"fixed-a100", "fixed-t4", "fixed-a100", "fixed-t4", "fixed-t4", "fixed-t4"}

// TestLiveAndSimulatedFlavorsAgree plays flavorScenario on the real system
// (two labelled fixed workers, the controller placing by rule 8) and
// through the simulator with a fixed pool per model, and checks that they
// agree on where each job ran (its model's machine; the simulator's pool
// of the same labels started as many jobs and ran the trace's
// slot-seconds, and each job ran its whole length live),
// and on the waits, overall and per model, within the bounds
// TestLiveAndSimulatedRunsAgree allows.
func TestLiveAndSimulatedFlavorsAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	r := newHybridRigWith(t, map[string]config.PoolConfig{
		"fixed": {Kind: config.PoolFixed, Slots: 6, PricePerSlotHour: 1},
	}, 0.7, 0.4, func(c *config.Config) {
		for name, req := range map[string]map[string]string{"ls-a100": modelA100, "ls-t4": modelT4} {
			tm := c.Templates["hy-sleep"]
			tm.Requires, tm.MaxSlots = req, 4
			c.Templates[name] = tm
		}
	})
	// Live, one fixed pool holds both machines, each reporting its own
	// model; the simulator has a pool per model. The policy reads a
	// worker's labels over its pool's, so the two place alike.
	for _, w := range []struct {
		id     string
		slots  int
		labels map[string]string
	}{{"fixed-a100", 4, modelA100}, {"fixed-t4", 2, modelT4}} {
		r.startWorker(workers.Options{ID: w.id, Pool: "fixed", Slots: w.slots, Labels: w.labels,
			Queues: []queues.Queue{queues.QueueCore, queues.QueueLoan}})
	}
	testenv.Eventually(t, 10*time.Second, "both fixed workers registered", func() bool { return len(r.workers()) == 2 })
	r.startController("ctl-1", r.capacity(nil))

	tr := flavorScenario()
	start := time.Now()
	ids := make([]string, len(tr.Jobs))
	for i, tj := range tr.Jobs {
		sleepUntil(start.Add(tj.Submit))
		sub := jobs.Submission{Template: tj.Template, IdempotencyKey: "flavor-" + strconv.Itoa(i),
			Params: map[string]json.RawMessage{"seconds": json.RawMessage(strconv.FormatFloat(tj.Duration.Seconds(), 'f', -1, 64))}}
		if tj.Slots > 1 {
			sub.Slots = &tj.Slots
		}
		ids[i] = r.submit(sub)
	}
	recs := r.waitAllSucceeded(ids, 60*time.Second)

	o := sim.Options{Config: r.cfg.PolicyConfig(), Tick: hyTick, Seed: 1, FixedSlotsByPool: map[string]int{"a100": 4, "t4": 2},
		Pools: []policy.Pool{
			{Name: "a100", Kind: policy.PoolFixed, PricePerSlotHour: 1, SlotsPerWorker: 4, Labels: modelA100},
			{Name: "t4", Kind: policy.PoolFixed, PricePerSlotHour: 1, SlotsPerWorker: 2, Labels: modelT4},
		}}
	res, err := sim.Run(tr, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Jobs != len(tr.Jobs) || res.Unfinished != 0 {
		t.Fatalf("the simulation finished %d of %d jobs", res.Jobs, len(tr.Jobs))
	}

	simPool := map[string]string{"fixed-a100": "a100", "fixed-t4": "t4"}
	var all []time.Duration
	waits := map[string][]time.Duration{}
	slotSecs := map[string]float64{}
	wantSlotSecs := map[string]float64{}
	// overrun is how much longer than the trace the jobs on each worker
	// ran live: a process start and exit, which a loaded machine
	// stretches. A job waits behind the jobs of its own model, so its
	// live wait may exceed the simulated one by up to that much.
	overrun := map[string]time.Duration{}
	for i, id := range ids {
		j := recs[id]
		if j.Worker != flavorWorker[i] {
			t.Errorf("job %d (%s, %d slots, requires %v) ran on %q, want %q",
				i, j.Spec.Template, tr.Jobs[i].Slots, tr.Jobs[i].Requires, j.Worker, flavorWorker[i])
		}
		w := j.StartedAt.Sub(j.CreatedAt)
		all = append(all, w)
		waits[j.Worker] = append(waits[j.Worker], w)
		ran := j.FinishedAt.Sub(j.StartedAt)
		if ran < tr.Jobs[i].Duration-50*time.Millisecond {
			t.Errorf("job %d ran %s live, shorter than its %s", i, ms(ran), ms(tr.Jobs[i].Duration))
		}
		slotSecs[j.Worker] += float64(tr.Jobs[i].Slots) * ran.Seconds()
		overrun[j.Worker] += max(ran-tr.Jobs[i].Duration, 0)
		wantSlotSecs[flavorWorker[i]] += float64(tr.Jobs[i].Slots) * tr.Jobs[i].Duration.Seconds()
	}
	lc := summarize(all)
	t.Logf("core wait p50: live %s, simulated %s; max: live %s, simulated %s",
		ms(lc.p50), ms(res.CoreWait.P50), ms(lc.max), ms(res.CoreWait.Max))
	type check struct {
		name              string
		live, simd, slack time.Duration
	}
	most := max(overrun["fixed-a100"], overrun["fixed-t4"])
	checks := []check{{"core wait p50", lc.p50, res.CoreWait.P50, most}, {"core wait max", lc.max, res.CoreWait.Max, most}}
	for _, worker := range []string{"fixed-a100", "fixed-t4"} {
		var u sim.PoolUsage
		for _, p := range res.Pools {
			if p.Name == simPool[worker] {
				u = p
			}
		}
		live := waits[worker]
		t.Logf("%s: %d jobs, p95 wait %s, %.2f slot-s; pool %s: %d jobs, p95 wait %s, %.2f slot-s",
			worker, len(live), ms(nearestP95(live)), slotSecs[worker], u.Name, u.CoreWait.N, ms(u.CoreWait.P95), u.SlotHours*3600)
		if u.CoreWait.N != len(live) {
			t.Errorf("%s started %d jobs live, pool %s %d simulated", worker, len(live), u.Name, u.CoreWait.N)
		}
		// The simulated pool ran exactly the slot-seconds the trace asks
		// of this model's jobs. Live adds a process start and exit to
		// each job, which a loaded machine stretches without bound, so
		// live is checked per job below (each ran its whole length), not
		// against a timing allowance.
		if got := u.SlotHours * 3600; math.Abs(got-wantSlotSecs[worker]) > 0.01 {
			t.Errorf("pool %s ran %.2f slot-seconds simulated, want %.2f (the trace's jobs on %s; %.2f live)",
				u.Name, got, wantSlotSecs[worker], worker, slotSecs[worker])
		}
		checks = append(checks, check{worker + " p95 wait", nearestP95(live), u.CoreWait.P95, overrun[worker]})
	}
	// As TestLiveAndSimulatedRunsAgree: live waits include a poll and the
	// wake-up after a tick, which a second and a half covers, and the
	// live overrun of the jobs they waited behind (measured, not assumed).
	for _, c := range checks {
		if d := c.live - c.simd; d < -time.Second || d > 1500*time.Millisecond+c.slack {
			t.Errorf("%s: live %s, simulated %s, with %s of live overrun on the worker", c.name, c.live, c.simd, ms(c.slack))
		}
	}
	// The 1-GPU A100 job waited for the A100 machine with a T4 GPU free:
	// both sides must show that wait, not a start on the wrong model.
	if a100 := waits["fixed-a100"]; len(a100) != 2 || slices.Max(a100) < 2*time.Second {
		t.Errorf("A100 waits live %v: want the 1-GPU job to wait over 2s for the machine", a100)
	}
	if res.Pools[0].CoreWait.P95 < 2*time.Second {
		t.Errorf("A100 p95 wait simulated %s: want over 2s", res.Pools[0].CoreWait.P95)
	}
}

// nearestP95 is the p95 of ws by the nearest rank, as the simulator
// reports it.
func nearestP95(ws []time.Duration) time.Duration {
	if len(ws) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ws))
	return s[max(int(math.Ceil(0.95*float64(len(s))))-1, 0)]
}
