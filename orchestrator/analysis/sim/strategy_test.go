package sim

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

func TestPeakDemandCountsHalfOpenIntervals(t *testing.T) {
	two := coreJob(5*time.Minute, 10*time.Minute)
	two.Slots = 2
	three := burstJob(10*time.Minute, 10*time.Minute, false)
	three.Slots = 3
	for _, c := range []struct {
		tr   trace.Trace
		want int
	}{
		{mkTrace(), 0},
		{mkTrace(coreJob(0, 10*time.Minute), coreJob(10*time.Minute, time.Minute)), 1},
		{mkTrace(coreJob(0, 11*time.Minute), two, three), 6},
		{mkTrace(coreJob(0, 10*time.Minute), two, three), 5},
	} {
		if got := PeakDemand(c.tr); got != c.want {
			t.Errorf("PeakDemand(%v) = %d, want %d", c.tr.Jobs, got, c.want)
		}
	}
}

func hybridOptions() Options {
	return Options{
		Pools:              []policy.Pool{quota(0.4), onDemand(1, 4), spotPool(0.3, 4)},
		FixedSlots:         16,
		CheckpointInterval: 10 * time.Minute,
	}
}

// AllFixed sizes the quota to the peak and drops elastic pools; since the
// quota covers the peak, one-slot jobs never wait, and a sized job waits
// at most for the tick whose Place starts it.
func TestAllFixedSizesQuotaToPeak(t *testing.T) {
	tr := benchTrace(2000, 1, 10*time.Minute, 5)
	o := AllFixed(tr, hybridOptions())
	if o.FixedSlots != PeakDemand(tr) || len(o.Pools) != 1 || o.Pools[0].Kind != policy.PoolFixed || o.Config.High != 1 {
		t.Fatalf("AllFixed options %+v (peak %d)", o, PeakDemand(tr))
	}
	r := mustRun(t, tr, o)
	// One-slot jobs start as they arrive; a sized job starts through the
	// policy's Place, on the next tick.
	if r.CoreWait.Max > DefaultTick || r.ElasticWait.Max > DefaultTick || r.Cost.OnDemand+r.Cost.Spot != 0 || r.Jobs != len(tr.Jobs) {
		t.Errorf("all fixed: core %+v, burst %+v, cost %+v, %d jobs", r.CoreWait, r.ElasticWait, r.Cost, r.Jobs)
	}
}

// AllElastic has no quota: core work overflows to on-demand at once and
// never touches spot, even though spot is cheaper.
func TestAllElasticRunsCoreOnDemand(t *testing.T) {
	var js []trace.Job
	for i := range 10 {
		js = append(js, coreJob(time.Duration(i)*time.Minute, 30*time.Minute))
	}
	o := AllElastic(hybridOptions())
	if o.FixedSlots != 0 || slices.ContainsFunc(o.Pools, func(p policy.Pool) bool { return p.Kind == policy.PoolFixed }) {
		t.Fatalf("AllElastic kept quota: %+v", o)
	}
	r := mustRun(t, mkTrace(js...), o)
	if r.Actions[policy.Overflow] != 10 || r.SlotHours.Fixed != 0 || r.SlotHours.Spot != 0 || r.Cost.Fixed != 0 {
		t.Errorf("actions %v, slot-hours %+v, cost %+v: want every core job overflowed to on-demand", r.Actions, r.SlotHours, r.Cost)
	}
	if want := 10 * 0.5; !near(r.SlotHours.OnDemand, want, 1e-12) || r.Jobs != 10 {
		t.Errorf("on-demand slot-hours %v (want %v), %d jobs", r.SlotHours.OnDemand, want, r.Jobs)
	}
	// Overflow happens on the tick after arrival; the workers then take
	// their start-up delay.
	if max := 3*time.Minute + DefaultTick; r.CoreWait.Max > max {
		t.Errorf("core waits %+v, want at most %v", r.CoreWait, max)
	}
}

func TestHybridSetsWatermarksOnly(t *testing.T) {
	o := hybridOptions()
	h := Hybrid(o, 0.8, 0.3)
	want := policy.DefaultConfig()
	want.High, want.Low = 0.8, 0.3
	if !reflect.DeepEqual(h.Config, want) || h.FixedSlots != o.FixedSlots || !reflect.DeepEqual(h.Pools, o.Pools) {
		t.Errorf("Hybrid = %+v", h)
	}
	h.Pools[0].Name = "changed"
	if o.Pools[0].Name == "changed" {
		t.Error("Hybrid shares its pools with the options it was given")
	}
}

func TestCompareIsSortedAndDeterministic(t *testing.T) {
	tr := benchTrace(3000, 1, 10*time.Minute, 9)
	o := hybridOptions()
	o.SpotReclaimRate = 0.5
	named := map[string]Options{
		"hybrid":      Hybrid(o, 0.7, 0.4),
		"all-fixed":   AllFixed(tr, o),
		"all-elastic": AllElastic(o),
	}
	a, err := Compare(tr, named)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range a {
		names = append(names, n.Name)
	}
	if !slices.Equal(names, []string{"all-elastic", "all-fixed", "hybrid"}) {
		t.Fatalf("names %v", names)
	}
	for _, n := range a {
		if r := mustRun(t, tr, named[n.Name]); !reflect.DeepEqual(r, n.Result) {
			t.Errorf("%s: Compare and Run differ", n.Name)
		}
	}
	b, err := Compare(tr, named)
	if err != nil || !reflect.DeepEqual(a, b) {
		t.Errorf("a second Compare differs (err %v)", err)
	}
	// The strategies are not the same installation.
	if a[0].Result.Cost == a[1].Result.Cost || a[1].Result.Cost == a[2].Result.Cost {
		t.Errorf("costs %+v %+v %+v", a[0].Result.Cost, a[1].Result.Cost, a[2].Result.Cost)
	}
}

func TestCompareReportsTheFirstErrorByName(t *testing.T) {
	tr := mkTrace(coreJob(0, time.Minute))
	good := Options{Pools: []policy.Pool{quota(1)}, FixedSlots: 1}
	res, err := Compare(tr, map[string]Options{"b-bad": {FixedSlots: -1}, "a-good": good, "c-bad": {Tick: -1}})
	if err == nil || !strings.Contains(err.Error(), "fixed_slots") {
		t.Errorf("err %v, want the fixed_slots problem of b-bad", err)
	}
	if len(res) != 1 || res[0].Name != "a-good" || res[0].Result.Jobs != 1 {
		t.Errorf("results %+v, want a-good's", res)
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	ok := mkTrace(coreJob(0, time.Minute))
	good := Options{Pools: []policy.Pool{quota(1)}, FixedSlots: 1}
	bad := func(f func(*Options)) Options {
		o := good
		o.Pools = slices.Clone(good.Pools)
		f(&o)
		return o
	}
	unsorted := ok
	unsorted.Jobs = []trace.Job{coreJob(time.Minute, time.Minute), coreJob(0, time.Minute)}
	for _, c := range []struct {
		name string
		tr   trace.Trace
		o    Options
		want string
	}{
		{"unsorted", unsorted, good, "sorted"},
		{"no duration", mkTrace(coreJob(0, 0)), good, "duration"},
		{"negative quota", ok, bad(func(o *Options) { o.FixedSlots = -2 }), "fixed_slots"},
		{"negative tick", ok, bad(func(o *Options) { o.Tick = -time.Second }), "tick"},
		{"negative spot rate", ok, bad(func(o *Options) { o.SpotReclaimRate = -1 }), "spot_reclaim_rate"},
		{"nan spot rate", ok, bad(func(o *Options) { o.SpotReclaimRate = math.NaN() }), "spot_reclaim_rate"},
		{"negative checkpoint", ok, bad(func(o *Options) { o.CheckpointOverhead = -1 }), "checkpoint"},
		{"two quotas", ok, bad(func(o *Options) { o.Pools = append(o.Pools, policy.Pool{Name: "q2", Kind: policy.PoolFixed}) }), "both fixed"},
		{"watermarks", ok, bad(func(o *Options) { o.Config = policy.DefaultConfig(); o.Config.Low = 0.9 }), "low"},
		{"pool", ok, bad(func(o *Options) { o.Pools = append(o.Pools, onDemand(1, 0)) }), "slots_per_worker"},
	} {
		_, err := Run(c.tr, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want one about %q", c.name, err, c.want)
		}
	}
	if _, err := Run(ok, good); err != nil {
		t.Errorf("good input: %v", err)
	}
	if r, err := Run(mkTrace(), good); err != nil || r.Jobs != 0 || r.Cost.Total != 0 || r.SimulatedSeconds != 0 {
		t.Errorf("empty trace: %+v, %v", r, err)
	}
}

// A quota without a fixed pool gets one, priced by FixedPricePerSlotHour.
func TestQuotaWithoutFixedPool(t *testing.T) {
	r := mustRun(t, mkTrace(coreJob(0, time.Hour)), Options{FixedSlots: 2, FixedPricePerSlotHour: 3})
	if r.Cost.Fixed != 2*3 || len(r.Pools) != 1 || r.Pools[0].Name != "fixed" || r.CoreWait.Max != 0 {
		t.Errorf("result %+v", r)
	}
}

// Without elastic pools burst work is lent to the quota as it arrives, as
// the live router sends it to loan: it must not wait a tick for the policy.
func TestBurstWorkGoesStraightToTheQuotaWithoutElasticPools(t *testing.T) {
	tr := mkTrace(burstJob(7*time.Second, time.Hour, false), burstJob(13*time.Second, time.Hour, true), coreJob(0, time.Hour))
	r := mustRun(t, tr, Options{FixedSlots: 3, Pools: []policy.Pool{quota(1)}, Tick: time.Minute})
	if r.ElasticWait.Max != 0 || r.CoreWait.Max != 0 {
		t.Fatalf("waits with free quota and no elastic pools: burst %v, core %v", r.ElasticWait.Max, r.CoreWait.Max)
	}
}
