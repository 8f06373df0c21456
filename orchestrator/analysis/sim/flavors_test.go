package sim

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

var (
	a100 = map[string]string{"gpu_model": "A100"}
	t4   = map[string]string{"gpu_model": "T4"}
)

// flavorPools are a fixed pool per GPU model, A100 on 8-GPU machines at 3
// per GPU-hour and T4 on 4-GPU machines priced by
// Options.FixedPricePerSlotHour, and an on-demand pool per model: A100 on
// 4-GPU machines, T4 on 1-GPU machines.
func flavorPools() []policy.Pool {
	od := func(name string, labels map[string]string, slots int, price float64) policy.Pool {
		p := onDemand(price, slots)
		p.Name, p.Labels, p.StartupDelay, p.IdleTTL = name, labels, 2*time.Minute, 5*time.Minute
		return p
	}
	return []policy.Pool{
		{Name: "a100", Kind: policy.PoolFixed, PricePerSlotHour: 3, SlotsPerWorker: 8, Labels: a100},
		{Name: "t4", Kind: policy.PoolFixed, SlotsPerWorker: 4, Labels: t4},
		od("od-a100", a100, 4, 6),
		od("od-t4", t4, 1, 1),
	}
}

func needs(j trace.Job, slots int, labels map[string]string) trace.Job {
	j.Slots, j.Requires = slots, labels
	return j
}

// Two fixed pools, one per GPU model: every job runs on its model's
// machines, so the 1-GPU A100 job waits an hour for an A100 though a T4
// GPU is free all along, and each pool is billed its own quota at its own
// price for the run's two hours.
//
// Workers: a100 w0, w1 (8 each); t4 w2 (4), w3 (the 2 left). At 0, best
// fit puts a1 (8) on w0, a2 and a3 (4 each) on w1, t1 (4) on w2, t2 (1) on
// w3; a4 (A100, 1) fits no A100 machine and reserves one; when w1 frees at
// 1h it starts there and runs to 1h30. Everything ends at 2h.
func TestFixedPoolPerModel(t *testing.T) {
	tr := mkTrace(
		needs(coreJob(0, 2*time.Hour), 8, a100),
		needs(coreJob(0, time.Hour), 4, a100),
		needs(coreJob(0, time.Hour), 4, a100),
		needs(coreJob(0, time.Hour), 4, t4),
		needs(coreJob(0, 2*time.Hour), 1, t4),
		needs(coreJob(0, 30*time.Minute), 1, a100),
	)
	o := Options{Pools: flavorPools()[:2], FixedSlotsByPool: map[string]int{"a100": 16, "t4": 6}, FixedPricePerSlotHour: 0.5}
	r := runChecked(t, tr, o)

	if r.Jobs != 6 || r.SimulatedSeconds != 7200 || r.FixedSlots != 22 {
		t.Fatalf("%d jobs over %vs with %d fixed slots: want 6 over 2h with 22", r.Jobs, r.SimulatedSeconds, r.FixedSlots)
	}
	a, b := pool(t, r, "a100"), pool(t, r, "t4")
	// A100: 8 x 2h + 2 x 4 x 1h + 1 x 0.5h; T4: 4 x 1h + 1 x 2h.
	if a.SlotHours != 24.5 || b.SlotHours != 6 {
		t.Errorf("slot-hours a100 %v, t4 %v: want 24.5 and 6", a.SlotHours, b.SlotHours)
	}
	// 16 x 3 x 2h and 6 x 0.5 x 2h.
	if a.FixedSlots != 16 || a.Cost != 96 || b.FixedSlots != 6 || b.Cost != 6 || r.Cost.Fixed != 102 {
		t.Errorf("a100 %d slots cost %v, t4 %d cost %v, fixed %v: want 16 at 96, 6 at 6, 102",
			a.FixedSlots, a.Cost, b.FixedSlots, b.Cost, r.Cost.Fixed)
	}
	if want := 1 - 30.5/44; math.Abs(r.FixedIdleShare-want) > 1e-12 {
		t.Errorf("fixed idle share %v, want %v", r.FixedIdleShare, want)
	}
	if a.CoreWait != (WaitStats{N: 4, P95: time.Hour}) || b.CoreWait != (WaitStats{N: 2}) {
		t.Errorf("core waits a100 %+v, t4 %+v: want 4 with p95 1h, 2 with none", a.CoreWait, b.CoreWait)
	}
	if a.Labels["gpu_model"] != "A100" || b.Labels["gpu_model"] != "T4" {
		t.Errorf("labels %v and %v", a.Labels, b.Labels)
	}
}

// flavorTrace is n jobs over a day of 20-minute mean, each requiring A100
// (55%: 1, 2, 4 or 8 GPUs) or T4 (45%: 1 or 2), 40% core; burst jobs
// checkpoint, so a stop loses nothing. With untagged > 0, that share of
// jobs requires no model.
func flavorTrace(n int, untagged float64, seed uint64) trace.Trace {
	r := rand.New(rand.NewPCG(seed, 2))
	tr := benchTrace(n, 1, 20*time.Minute, seed)
	for i := range tr.Jobs {
		j := &tr.Jobs[i]
		j.Checkpointable = j.Class == jobs.ClassBurst
		switch x := r.Float64(); {
		case x < untagged:
			j.Slots = 1
		case x < untagged+(1-untagged)*0.55:
			j.Requires = a100
			j.Slots = []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 4, 4, 4, 4, 8}[r.IntN(20)]
		default:
			j.Requires = t4
			j.Slots = 1 + r.IntN(2)
		}
	}
	return tr
}

func flavorOptions() Options {
	return Options{Pools: flavorPools(), FixedSlotsByPool: map[string]int{"a100": 8, "t4": 4}, FixedPricePerSlotHour: 0.5, Seed: 1}
}

// With a quota and an on-demand pool per model, every job runs only on
// its model's workers (invariants checks each at every tick), and never
// on a machine smaller than itself: no 8-GPU job on the 4-GPU on-demand
// A100 machines, no 2-GPU job on the 1-GPU T4 ones. So each model's work
// is exactly the slot-hours of its two pools, and its waits are theirs.
func TestJobsRunOnlyOnTheirModel(t *testing.T) {
	tr := flavorTrace(600, 0, 21)
	work := map[string]float64{}
	count := map[string]int{}
	for _, j := range tr.Jobs {
		work[j.Requires["gpu_model"]] += float64(j.Slots) * j.Duration.Hours()
		count[j.Requires["gpu_model"]]++
	}
	s, err := newSim(tr, flavorOptions())
	if err != nil {
		t.Fatal(err)
	}
	biggest := map[string]int32{}
	s.check = func(s *sim, snap policy.Snapshot) error {
		for _, wi := range s.live {
			w := &s.workers[wi]
			for _, ti := range w.tasks {
				biggest[s.pools[w.pool].Name] = max(biggest[s.pools[w.pool].Name], s.tasks[ti].slots)
			}
		}
		return invariants(s, snap)
	}
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	r := s.result()
	if r.Jobs != len(tr.Jobs) || r.Unfinished != 0 || r.LostWork != 0 {
		t.Fatalf("%d of %d jobs finished, %d unfinished, %v lost", r.Jobs, len(tr.Jobs), r.Unfinished, r.LostWork)
	}
	for _, m := range []struct{ model, fixed, od string }{{"A100", "a100", "od-a100"}, {"T4", "t4", "od-t4"}} {
		f, o := pool(t, r, m.fixed), pool(t, r, m.od)
		if got := f.SlotHours + o.SlotHours; math.Abs(got-work[m.model]) > 1e-9*work[m.model] {
			t.Errorf("%s pools ran %v slot-hours, the %s jobs need %v", m.model, got, m.model, work[m.model])
		}
		if n := f.CoreWait.N + f.BurstWait.N + o.CoreWait.N + o.BurstWait.N; n != count[m.model] {
			t.Errorf("%s pools started %d jobs, the trace has %d", m.model, n, count[m.model])
		}
		if o.Launched == 0 || o.SlotHours == 0 {
			t.Errorf("the case exercises too little: pool %s launched %d workers and ran %v slot-hours", m.od, o.Launched, o.SlotHours)
		}
	}
	if biggest["a100"] != 8 || biggest["od-a100"] != 4 || biggest["t4"] != 2 || biggest["od-t4"] != 1 {
		t.Errorf("biggest job per pool %v: want 8 on a100, 4 on od-a100, 2 on t4, 1 on od-t4", biggest)
	}
}

// Jobs that require no model run on either; the model's jobs still only
// on theirs.
func TestUntaggedJobsRunAnywhere(t *testing.T) {
	r := runChecked(t, flavorTrace(600, 0.2, 22), flavorOptions())
	if r.Unfinished != 0 || r.Actions[policy.Place] == 0 {
		t.Errorf("%d unfinished, actions %v", r.Unfinished, r.Actions)
	}
}

// A spike of T4 work grows only the T4 on-demand pool: the policy launches
// a pool for labelled work only when its labels fit, and the A100 quota,
// idle, lends none of its slots to it.
func TestSpikeGrowsItsModelsPool(t *testing.T) {
	var js []trace.Job
	for range 10 {
		js = append(js, needs(burstJob(0, 30*time.Minute, false), 1, t4))
	}
	r := runChecked(t, mkTrace(js...), flavorOptions())
	a, b, oa, ob := pool(t, r, "a100"), pool(t, r, "t4"), pool(t, r, "od-a100"), pool(t, r, "od-t4")
	if r.Jobs != 10 || a.SlotHours != 0 || oa.Launched != 0 || ob.Launched == 0 || b.SlotHours+ob.SlotHours != 5 {
		t.Errorf("%d jobs; a100 ran %v slot-hours, od-a100 launched %d, od-t4 %d, T4 pools ran %v: want 10, 0, 0, some, 5",
			r.Jobs, a.SlotHours, oa.Launched, ob.Launched, b.SlotHours+ob.SlotHours)
	}
	if b.BurstWait.N+ob.BurstWait.N != 10 || ob.BurstWait.P95 < 2*time.Minute {
		t.Errorf("burst waits t4 %+v, od-t4 %+v: want all 10 there, on-demand ones after its 2m start-up", b.BurstWait, ob.BurstWait)
	}
}

// A quota per pool keeps every other Options field working: the strategy
// helpers give each flavor its peak, or drop the quota.
func TestStrategiesWithFlavors(t *testing.T) {
	tr := mkTrace(
		needs(coreJob(0, time.Hour), 8, a100), needs(coreJob(0, time.Hour), 2, a100),
		needs(coreJob(0, time.Hour), 2, t4), coreJob(0, time.Hour),
	)
	fixed := AllFixed(tr, flavorOptions())
	if fixed.FixedSlotsByPool["a100"] != 11 || fixed.FixedSlotsByPool["t4"] != 3 || fixed.FixedSlots != 0 || len(fixed.Pools) != 2 {
		t.Errorf("all fixed: %v, %d, %d pools: want a100 11 and t4 3 (each with the untagged job)",
			fixed.FixedSlotsByPool, fixed.FixedSlots, len(fixed.Pools))
	}
	elastic := AllElastic(flavorOptions())
	if elastic.FixedSlotsByPool != nil || len(elastic.Pools) != 2 {
		t.Errorf("all elastic keeps a quota: %v, %d pools", elastic.FixedSlotsByPool, len(elastic.Pools))
	}
	for name, o := range map[string]Options{"all-elastic": elastic, "hybrid": Hybrid(flavorOptions(), 0.9, 0.2)} {
		if _, err := Run(tr, o); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Every misuse of FixedSlotsByPool is reported, naming the field.
func TestFixedSlotsByPoolErrors(t *testing.T) {
	with := func(edit func(o *Options)) Options {
		o := flavorOptions()
		o.FixedSlotsByPool = map[string]int{"a100": 8, "t4": 4}
		edit(&o)
		return o
	}
	for _, c := range []struct {
		name string
		o    Options
		want string
	}{
		{"unknown pool", with(func(o *Options) { o.FixedSlotsByPool["h100"] = 8 }), "fixed_slots_by_pool[h100]: no pool"},
		{"elastic pool", with(func(o *Options) { o.FixedSlotsByPool["od-t4"] = 8 }), "fixed_slots_by_pool[od-t4]: pool \"od-t4\" is ondemand"},
		{"pool left out", with(func(o *Options) { delete(o.FixedSlotsByPool, "t4") }), "fixed pool \"t4\" has no entry"},
		{"negative", with(func(o *Options) { o.FixedSlotsByPool["t4"] = -1 }), "fixed_slots_by_pool[t4] is -1"},
		{"bad machine size", with(func(o *Options) { o.Pools[1].SlotsPerWorker = -4 }), "pools[1].slots_per_worker is -4"},
		{"fixed slots differ", with(func(o *Options) { o.FixedSlots = 10 }), "fixed_slots is 10 but fixed_slots_by_pool sums to 12"},
		{"worker slots", with(func(o *Options) { o.FixedWorkerSlots = 2 }), "fixed_worker_slots is 2 with fixed_slots_by_pool"},
		{"two fixed without", with(func(o *Options) { o.FixedSlotsByPool = nil }), "both fixed"},
	} {
		_, err := Run(mkTrace(coreJob(0, time.Minute)), c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
	}
	// The sum as FixedSlots is the same quota, and a pool may have none.
	o := with(func(o *Options) { o.FixedSlots, o.FixedSlotsByPool["t4"] = 8, 0 })
	if r, err := Run(mkTrace(coreJob(0, time.Minute)), o); err != nil || r.FixedSlots != 8 || pool(t, r, "t4").Cost != 0 {
		t.Errorf("err %v, %d fixed slots, t4 cost %v: want 8 slots and a free t4", err, r.FixedSlots, pool(t, r, "t4").Cost)
	}
}
