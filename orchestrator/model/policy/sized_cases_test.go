package policy

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// sized returns j with k slots per member and n members.
func sized(j Job, k, n int) Job {
	j.Slots, j.Replicas = k, n
	return j
}

// runPlaceCases runs table cases compared with placeSummary, so a Place
// shows its workers.
func runPlaceCases(t *testing.T, cases []planCase) { runSteadyCases(t, cases, placeSummary) }

// runSteadyCases runs table cases at t0, each plan compared by sum, and
// checks that the plan in flight plans nothing more.
func runSteadyCases(t *testing.T, cases []planCase, sum func(Plan) string) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustValid(t, c.s)
			p := Decide(c.s, t0)
			if got := sum(p); got != c.want {
				t.Errorf("plan\n got: %s\nwant: %s\n%s", got, c.want, p)
			}
			// Whatever the case, the plan in flight plans nothing more.
			if next := Decide(Apply(c.s, p, t0), t0); !next.Empty() {
				t.Errorf("not idempotent: then\n%s", next)
			}
		})
	}
}

// Lending counts slots: a k-slot lend commits k, and one that would pass
// the high watermark is skipped while a smaller one after it still fits.
func TestSizedLendStaysUnderWatermark(t *testing.T) {
	burst := jobs.ClassBurst
	pools, ws := fixedWith(10, 4) // ceiling 7 at high 0.70; 4 committed
	q := func(id string, k int, at time.Duration) Job {
		return sized(queued(id, burst, QueueBurst, ago(at)), k, 0)
	}
	runPlaceCases(t, []planCase{
		{"2 + 1 slots fit under 7, a second 2 does not",
			snap(pools, ws, q("s1", 2, 4*time.Minute), q("s2", 2, 3*time.Minute), q("s3", 2, 2*time.Minute), q("u1", 1, time.Minute)), t0,
			"lend(s1) lend(u1)"},
		{"a job bigger than every fixed worker is not lent",
			snap(pools, ws, q("s8", 11, 2*time.Minute), q("u1", 1, time.Minute)), t0,
			"lend(u1)"},
	})
}

// Rule 1 for a k-slot core job frees k slots on one fixed worker: one
// k-slot borrowed job, or several smaller ones on the same worker, never
// one each on two workers. The core job then reserves that worker.
func TestSizedReclaimOnOneWorker(t *testing.T) {
	core, burst := jobs.ClassCore, jobs.ClassBurst
	pools := []Pool{fixedPool("fx", "eu")}
	f1, f2 := worker("f1", "fx", 4, 4), worker("f2", "fx", 4, 4)
	c1 := sized(queued("c1", core, QueueCore, ago(time.Second)), 2, 0)
	b := func(id string, w Worker, k int, lost time.Duration) Job {
		return sized(running(id, burst, w, ago(lost)), k, 0)
	}
	runPlaceCases(t, []planCase{
		{"one 2-slot borrowed job",
			snap(pools, []Worker{f1, f2}, b("B", f1, 2, 5*time.Minute), c1), t0,
			"reclaim(B,f1) place(c1,f1)"},
		{"two 1-slot borrowed jobs on one worker, not the cheaper one elsewhere",
			snap(pools, []Worker{f1, f2}, b("b1", f1, 1, 5*time.Minute), b("b2", f1, 1, 6*time.Minute), b("b3", f2, 1, time.Minute), c1), t0,
			"reclaim(b1,f1) reclaim(b2,f1) place(c1,f1)"},
		{"one each on two workers frees nothing; the job waits reserved",
			snap(pools, []Worker{f1, f2}, b("b1", f1, 1, 5*time.Minute), b("b2", f2, 1, 6*time.Minute), c1), t0,
			"place(c1,f1)"},
		{"a one-slot core job still takes the least lost work anywhere",
			snap(pools, []Worker{f1, f2}, b("b1", f1, 1, 5*time.Minute), b("b2", f2, 1, time.Minute), queued("u", core, QueueCore, ago(time.Second))), t0,
			"reclaim(b2,f2)"},
	})
}

// Scale-up packs sized work onto new workers of the pool's size, first
// fit; a job bigger than a pool's workers goes to a pool whose workers
// hold it, or waits.
func TestSizedScaleUpPacks(t *testing.T) {
	burst := jobs.ClassBurst
	od := elasticPool("od", PoolOnDemand, "eu", 1.0) // 4 slots a worker
	od8 := elasticPool("od8", PoolOnDemand, "eu", 2.0)
	od8.SlotsPerWorker = 8
	q := func(id string, k int) Job {
		return sized(queued(id, burst, QueueBurst, ago(time.Minute)), k, 0)
	}
	runPlaceCases(t, []planCase{
		{"three 3-slot jobs need three 4-slot workers", snap([]Pool{od}, nil, q("a", 3), q("b", 3), q("c", 3)), t0, "scale_up(od,3)"},
		{"two 2-slot jobs share one", snap([]Pool{od}, nil, q("a", 2), q("b", 2)), t0, "scale_up(od,1)"},
		{"an 8-slot job is not for 4-slot workers", snap([]Pool{od}, nil, q("big", 8)), t0, ""},
		{"it goes to the dearer pool that holds it", snap([]Pool{od, od8}, nil, q("big", 8)), t0, "scale_up(od8,1)"},
		{"a gang of 3 x 2 slots needs two 4-slot workers", snap([]Pool{od}, nil, sized(q("g", 2), 2, 3)), t0, "scale_up(od,2)"},
	})
}

// The head sized job that fits nowhere reserves the worker closest to
// fitting; later, smaller jobs backfill only where they fit now, never on
// the reserved worker, and no second reservation is made in the group.
func TestSizedReservationAndBackfill(t *testing.T) {
	core := jobs.ClassCore
	pools := []Pool{fixedPool("fx", "eu")}
	ws := []Worker{worker("f1", "fx", 8, 6), worker("f2", "fx", 8, 7), worker("f3", "fx", 8, 5)}
	h := sized(queued("h", core, QueueCore, ago(3*time.Minute)), 4, 0)
	l := sized(queued("l", core, QueueCore, ago(2*time.Minute)), 2, 0)
	l2 := sized(queued("l2", core, QueueCore, ago(time.Minute)), 2, 0)
	s := snap(pools, ws, h, l, l2)
	runPlaceCases(t, []planCase{
		{"head reserved on the closest, a 2-slot job backfills elsewhere", s, t0, "place(h,f3) place(l,f1)"},
	})

	// With the reservation waiting, the next head makes none, and a job
	// that fits still goes where it fits.
	waiting := Apply(s, Decide(s, t0), t0)
	waiting.Jobs = append(waiting.Jobs, sized(queued("l3", core, QueueCore, ago(0)), 1, 0))
	waiting.Jobs[len(waiting.Jobs)-1].Requires = map[string]string{"gpu": "A"} // sized, one slot
	waiting.Workers[1].Labels = map[string]string{"gpu": "A"}
	runPlaceCases(t, []planCase{{"a waiting reservation closes its worker and its group", waiting, t0, "place(l3,f2)"}})
}

// Gangs go all at once, into one region, or not at all.
func TestSizedGangs(t *testing.T) {
	burst := jobs.ClassBurst
	eu, us := elasticPool("od-eu", PoolOnDemand, "eu", 1.0), elasticPool("od-us", PoolOnDemand, "us", 1.0)
	eu.SlotsPerWorker, us.SlotsPerWorker = 8, 8
	ws := []Worker{worker("eu1", "od-eu", 8, 4), worker("us1", "od-us", 8, 4), worker("us2", "od-us", 8, 4)}
	var busy []Job // half of each worker
	for _, w := range ws {
		busy = append(busy, sized(running("r-"+w.ID, burst, w, ago(time.Hour)), 4, 0))
	}
	small := slices.Clone(ws)
	small[0].Slots = 6 // an older, smaller machine
	g := sized(queued("g", burst, QueueBurst, ago(time.Minute)), 4, 2)
	g.Checkpointable = false // on-demand only
	pinned := g
	pinned.Region = "eu"
	runPlaceCases(t, []planCase{
		{"both members in the region with room for both", snap([]Pool{eu, us}, ws, append(slices.Clone(busy), g)...), t0, "place(g,us1+us2)"},
		{"pinned to eu, where a new worker may come, it waits for one", snap([]Pool{eu, us}, ws, append(slices.Clone(busy), pinned)...), t0, "scale_up(od-eu,1)"},
		{"no half gang: eu1 holds one member only, so a new worker comes", snap([]Pool{eu, us}, small, append(slices.Clone(busy), pinned)...), t0, "scale_up(od-eu,1)"},
		{"members share a worker with room for both", snap([]Pool{eu, us}, []Worker{worker("eu1", "od-eu", 8, 0)}, pinned), t0, "place(g,eu1+eu1)"},
	})
}

// Labels, CPUs and size decide which workers are eligible.
func TestSizedEligibility(t *testing.T) {
	core := jobs.ClassCore
	pools := []Pool{fixedPool("fx", "eu")}
	a, b := worker("fa", "fx", 8, 0), worker("fb", "fx", 8, 0)
	a.Labels, b.Labels = map[string]string{"gpu_model": "A100-80GB"}, map[string]string{"gpu_model": "H100"}
	a.CPUs, b.CPUs = 4, 32
	j := sized(queued("j", core, QueueCore, ago(time.Minute)), 2, 0)
	h100 := j
	h100.Requires = map[string]string{"gpu_model": "H100"}
	cpu := j
	cpu.CPUs = 8
	big := sized(j, 16, 0)
	runPlaceCases(t, []planCase{
		{"best fit by ID when both are empty", snap(pools, []Worker{a, b}, j), t0, "place(j,fa)"},
		{"labels must match", snap(pools, []Worker{a, b}, h100), t0, "place(j,fb)"},
		{"CPUs must be there", snap(pools, []Worker{a, b}, cpu), t0, "place(j,fb)"},
		{"a worker too small is never eligible, not even to reserve", snap(pools, []Worker{a, b}, big), t0, ""},
	})
}

// A snapshot of one-slot unsized jobs has no sized set: rule 8 plans
// nothing, and String renders a Place's workers.
func TestPlaceString(t *testing.T) {
	a := Action{Kind: Place, Job: "g", Workers: []string{"w1", "w2"}, Queue: QueueBurst, Rule: 8, Reason: "fits"}
	if got, want := a.String(), "place job=g workers=w1,w2 -> burst (rule 8: fits)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestValidateSizes(t *testing.T) {
	core := jobs.ClassCore
	pools := []Pool{fixedPool("fx", "eu")}
	w := worker("f1", "fx", 4, 0)
	neg := w
	neg.CPUs = -1
	bad := sized(queued("a", core, QueueCore, t0), -1, -2)
	wrongLen := sized(queued("b", core, QueueCore, t0), 2, 2)
	wrongLen.Placed = []string{"f1"}
	tooSmall := sized(queued("c", core, QueueCore, t0), 8, 0)
	tooSmall.Placed = []string{"f1"}
	unsized := queued("d", core, QueueCore, t0)
	unsized.Placed = []string{"f1"}
	s := Snapshot{Config: DefaultConfig(), Pools: pools, Workers: []Worker{neg}, Jobs: []Job{bad, wrongLen, tooSmall, unsized}}
	err := s.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"workers[f1].cpus", "jobs[a].slots", "jobs[b].placed", "jobs[c].placed[0]", "jobs[d].placed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\ndoes not name %s", err, want)
		}
	}
}

// Labels a pool declares count for its workers and decide scale-up: a job
// requiring gpu_model H100 is placed on a worker of an H100 pool that
// reports no labels of its own, and only an H100 pool is grown for it.
func TestSizedPoolLabels(t *testing.T) {
	core, burst := jobs.ClassCore, jobs.ClassBurst
	fx := fixedPool("fx", "eu")
	fx.Labels = map[string]string{"gpu_model": "H100"}
	a100 := elasticPool("a100", PoolOnDemand, "eu", 1.0)
	a100.Labels = map[string]string{"gpu_model": "A100"}
	h100 := elasticPool("h100", PoolOnDemand, "eu", 3.0)
	h100.Labels = map[string]string{"gpu_model": "H100"}
	bare := elasticPool("bare", PoolOnDemand, "eu", 0.5)
	needs := func(j Job) Job {
		j = sized(j, 2, 0)
		j.Requires = map[string]string{"gpu_model": "H100"}
		return j
	}
	runPlaceCases(t, []planCase{
		{"a worker of a labelled pool carries its labels",
			snap([]Pool{fx}, []Worker{worker("f1", "fx", 4, 0)}, needs(queued("c", core, QueueCore, ago(time.Minute)))), t0,
			"place(c,f1)"},
		{"only the pool declaring the label is grown, dearer or not",
			snap([]Pool{a100, h100, bare}, nil, needs(queued("b", burst, QueueBurst, ago(time.Minute)))), t0,
			"scale_up(h100,1)"},
		{"no pool declares it: nothing is launched",
			snap([]Pool{a100, bare}, nil, needs(queued("b", burst, QueueBurst, ago(time.Minute)))), t0,
			""},
	})
}

// A borrowed gang is reclaimed whole for core work: the action goes to
// member 0's worker and counts the slots of every member as freed, so one
// gang of 2 x 2 on two full fixed workers makes room for two 1-slot core
// jobs and no second victim is taken.
func TestSizedGangIsReclaimedWhole(t *testing.T) {
	core, burst := jobs.ClassCore, jobs.ClassBurst
	pools := []Pool{fixedPool("fx", "eu")}
	f1, f2 := worker("f1", "fx", 2, 2), worker("f2", "fx", 2, 2)
	gang := sized(running("g", burst, f1, ago(10*time.Minute)), 2, 2)
	gang.Placed = []string{"f1", "f2"}
	gang.Queue = QueueLoan
	c1 := queued("c1", core, QueueCore, ago(time.Second))
	c2 := queued("c2", core, QueueCore, ago(time.Second))
	runPlaceCases(t, []planCase{
		{"one gang frees both workers", snap(pools, []Worker{f1, f2}, gang, c1, c2), t0, "reclaim(g,f1)"},
	})
}

// Below the low watermark an elastic worker that still runs work is
// drained, unless it holds slots for a placed job that has not started:
// draining would take the placement back and rule 8 would place the job
// again, for ever.
func TestSizedNoDrainOfAWorkerHoldingAPlacement(t *testing.T) {
	burst := jobs.ClassBurst
	fxPools, fx := fixedWith(10, 0)
	od := elasticPool("od", PoolOnDemand, "eu", 1.0)
	e1 := worker("e1", "od", 4, 2)
	r := running("r", burst, e1, ago(time.Hour))
	r.Checkpointable = false // finishes where it is
	placed := sized(queued("p", burst, QueueBurst, ago(time.Minute)), 2, 0)
	placed.Checkpointable = false
	placed.Placed = []string{"e1"}
	pools := append(slices.Clone(fxPools), od)
	drains := func(s Snapshot) bool {
		for _, a := range Decide(s, t0).Actions {
			if a.Kind == Drain {
				return true
			}
		}
		return false
	}
	without := snap(pools, append(slices.Clone(fx), e1), r)
	mustValid(t, without)
	if !drains(without) {
		t.Fatalf("the worker is not drained even without a placement: the case tests nothing\n%s", Decide(without, t0))
	}
	with := snap(pools, append(slices.Clone(fx), e1), r, placed)
	mustValid(t, with)
	if drains(with) {
		t.Errorf("a worker holding a placement was drained:\n%s", Decide(with, t0))
	}
}

// A job that accepts several models is placed on a worker of any of them,
// and on no other.
func TestPlaceAJobAcceptingSeveralModels(t *testing.T) {
	pools := []Pool{fixedPool("fx", "eu")}
	v32, t4 := worker("v32", "fx", 4, 0), worker("t4", "fx", 4, 0)
	v32.Labels, t4.Labels = map[string]string{"gpu_model": "V100M32"}, map[string]string{"gpu_model": "T4"}
	j := queued("c1", jobs.ClassCore, QueueCore, ago(time.Minute))
	j.Requires = map[string]string{"gpu_model": "V100M16" + jobs.AnyOf + "V100M32"}
	runPlaceCases(t, []planCase{
		{"the V100M32 worker meets it", snap(pools, []Worker{t4, v32}, j), t0, "place(c1,v32)"},
		{"a T4 worker does not", snap(pools, []Worker{t4}, j), t0, ""},
	})
}
