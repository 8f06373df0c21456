package insight_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/cost"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/usage"
)

// clock is the tests' hand-moved clock.
type clock = testenv.Clock

var t0 = time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)

func at(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }

// pools prices the scenario: a 2-slot quota at 1.0, spot billed per second
// with a 60 s minimum at 0.5, and on-demand billed per started hour at 3.0.
func pools() []policy.Pool {
	return []policy.Pool{
		{Name: "onprem", Kind: policy.PoolFixed, PricePerSlotHour: 1.0},
		{Name: "spot", Kind: policy.PoolSpot, PricePerSlotHour: 0.5, Billing: policy.BillingPerSecond, MinBilling: time.Minute, SlotsPerWorker: 2},
		{Name: "ondemand", Kind: policy.PoolOnDemand, PricePerSlotHour: 3.0, Billing: policy.BillingPerHour, SlotsPerWorker: 1},
	}
}

type rig struct {
	t     *testing.T
	ctx   context.Context
	clk   *clock
	store *queues.Store
	acct  *usage.Store
}

func newRig(t *testing.T) *rig {
	rdb, ns := testenv.Redis(t)
	clk := testenv.NewClock(t0)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns, Now: clk.Now})
	return &rig{t: t, ctx: context.Background(), clk: clk, store: store, acct: usage.New(store)}
}

func (r *rig) submit(m int, team string, class jobs.Class) string {
	r.t.Helper()
	r.clk.Set(at(m))
	sp := jobs.Spec{Template: "train", Team: team, Command: []string{"true"}, Class: class, Rhythm: jobs.RhythmPulse,
		Timeout: jobs.Duration(3 * time.Hour), Grace: jobs.Duration(time.Second)}
	q := queues.QueueBurst
	if class == jobs.ClassCore {
		q = queues.QueueCore
	}
	sub, err := r.store.Submit(r.ctx, sp, q)
	if err != nil {
		r.t.Fatal(err)
	}
	return sub.Job.ID
}

func (r *rig) beat(m int, w queues.WorkerInfo) {
	r.t.Helper()
	r.clk.Set(at(m))
	if _, err := r.store.Heartbeat(r.ctx, w, nil); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) claim(m int, id string, attempt int, worker string) jobs.Job {
	r.t.Helper()
	r.clk.Set(at(m))
	j, ok, err := r.store.Claim(r.ctx, queues.Delivery{JobID: id, Attempt: attempt}, worker)
	if err != nil || !ok {
		r.t.Fatalf("claim %s by %s: ok %v err %v", id, worker, ok, err)
	}
	return j
}

func (r *rig) finish(m int, j jobs.Job) {
	r.t.Helper()
	r.clk.Set(at(m))
	code := 0
	if ok, err := r.store.Finish(r.ctx, j, j.Worker, jobs.StateSucceeded, &code, ""); err != nil || !ok {
		r.t.Fatalf("finish %s: %v %v", j.ID, ok, err)
	}
}

// TestCostFromLiveRecordsMatchesAHandCalculation drives the store through
// two hours of a quota, a spot worker and an on-demand worker that dies,
// with a preemption, then prices the window from the records the scripts
// wrote and checks every figure against a hand calculation.
func TestCostFromLiveRecordsMatchesAHandCalculation(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	fixed := queues.WorkerInfo{ID: "fixed-1", Pool: "onprem", Slots: 2, StartedAt: at(-60)}
	spot := queues.WorkerInfo{ID: "spot-1", Pool: "spot", Slots: 2, StartedAt: at(10)}
	od := queues.WorkerInfo{ID: "od-1", Pool: "ondemand", Slots: 1, StartedAt: at(20)}

	r.beat(0, fixed)
	j3 := r.submit(0, "etl", jobs.ClassCore)
	a3 := r.claim(0, j3, 1, fixed.ID) // core on fixed, 0 → 90

	j1 := r.submit(10, "ml", jobs.ClassBurst)
	r.beat(10, spot)
	a1 := r.claim(15, j1, 1, spot.ID) // spot 15 → 30, checkpoint at 25
	r.clk.Set(at(25))
	if _, err := r.store.Checkpoint(r.ctx, a1, spot.ID, "ckpt"); err != nil {
		t.Fatal(err)
	}
	r.clk.Set(at(30))
	if _, err := r.store.Requeue(r.ctx, a1, spot.ID, queues.Requeue{Preempt: true, Queue: queues.QueueLoan}); err != nil {
		t.Fatal(err)
	}
	a1b := r.claim(30, j1, 2, fixed.ID) // lent fixed slot 30 → 60
	r.clk.Set(at(40))
	if err := r.store.Deregister(r.ctx, spot.ID); err != nil { // spot lived 10 → 40
		t.Fatal(err)
	}

	j2 := r.submit(20, "etl", jobs.ClassBurst)
	r.beat(20, od)
	r.claim(20, j2, 1, od.ID)
	r.beat(50, od) // its last beat: od-1 and j2's attempt end at 50

	r.beat(55, fixed)
	r.clk.Set(at(55))
	if rec, err := r.store.RecoverDeadWorkers(r.ctx, time.Minute); err != nil || len(rec) != 1 {
		t.Fatalf("recover: %v %v", rec, err)
	}
	r.finish(60, a1b)
	r.beat(90, fixed)
	r.finish(90, a3)

	src := insight.Source{Store: r.store, Accounting: r.acct, Pools: pools(), Quota: map[string]int{"onprem": 2}}
	rep, problems, err := src.Cost(r.ctx, at(0), at(120))
	if err != nil || len(problems) > 0 {
		t.Fatalf("cost: %v %v", err, problems)
	}

	// Paid: the quota 2 slots x 2 h x 1.0 = 4; spot-1 2 slots x 30 min x
	// 0.5 = 0.5; od-1 lived 30 min, billed a whole hour: 1 x 1 h x 3 = 3.
	// Charged: j1 on spot 15 min x 0.5 = 0.125 (5 min lost since its
	// checkpoint: 0.041667), then 30 min on the quota at 1.0 = 0.5; j2 on
	// on-demand 30 min x 3 = 1.5, all of it lost (no checkpoint); j3 90 min
	// on the quota = 1.5. Premium over the fixed 1.0: spot 0.25 h x -0.5,
	// on-demand 0.5 h x 2.
	checks := []struct {
		name      string
		got, want float64
	}{
		{"total paid", rep.Total.PaidCost, 7.5},
		{"fixed paid", rep.Total.FixedCost, 4},
		{"elastic paid", rep.Total.ElasticCost, 3.5},
		{"charged", rep.Total.Cost, 3.625},
		{"idle", rep.Total.IdleCost, 3.875},
		{"lost", rep.Total.LostCost, 5.0/60*0.5 + 1.5},
		{"premium", rep.Total.Premium, -0.125 + 1},
		{"fixed idle share", rep.Fixed.IdleShare, 0.5},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s: got %.9f, want %.9f", c.name, c.got, c.want)
		}
	}
	teams := map[string]cost.GroupRow{}
	for _, g := range rep.Teams {
		teams[g.Name] = g
	}
	if math.Abs(teams["ml"].Cost-0.625) > 1e-9 || math.Abs(teams["etl"].Cost-3) > 1e-9 {
		t.Errorf("teams %+v", rep.Teams)
	}
	paid := map[string]float64{}
	for _, p := range rep.Pools {
		paid[p.Pool] = p.PaidCost
	}
	if math.Abs(paid["spot"]-0.5) > 1e-9 || math.Abs(paid["ondemand"]-3) > 1e-9 || math.Abs(paid["onprem"]-4) > 1e-9 {
		t.Errorf("pools paid %v", paid)
	}
	for _, j := range rep.Jobs {
		if j.JobID == j1 && j.Attempts != 2 {
			t.Errorf("j1 attempts %d, want 2", j.Attempts)
		}
	}

	// The two halves of the window add up to the whole.
	a, _, errA := src.Cost(r.ctx, at(0), at(45))
	b, _, errB := src.Cost(r.ctx, at(45), at(120))
	if errA != nil || errB != nil || math.Abs(a.Total.PaidCost+b.Total.PaidCost-7.5) > 1e-9 ||
		math.Abs(a.Total.Cost+b.Total.Cost-3.625) > 1e-9 {
		t.Errorf("halves: %v %v paid %.6f + %.6f, charged %.6f + %.6f", errA, errB,
			a.Total.PaidCost, b.Total.PaidCost, a.Total.Cost, b.Total.Cost)
	}
}
