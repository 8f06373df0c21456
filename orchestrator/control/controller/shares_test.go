package controller_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/shares"
	"github.com/ballastdev/ballast/queues"
)

// sharesAB is a 4-slot quota shared by teams a and b, two slots each.
func sharesAB() policy.Config {
	cfg := policy.DefaultConfig()
	cfg.Tick = time.Second
	cfg.Shares = shares.Config{Teams: []shares.Team{
		{Name: "a", Slots: 2, LendLimit: 2, BorrowLimit: 4, Weight: 1, ReclaimWithin: time.Minute},
		{Name: "b", Slots: 2, LendLimit: 2, BorrowLimit: 4, Weight: 1, ReclaimWithin: time.Minute}}}
	return cfg
}

var fixedPools = []policy.Pool{{Name: "fixed", Kind: policy.PoolFixed, PricePerSlotHour: 1}}

func teamSpec(team string) jobs.Spec {
	return jobs.Spec{Command: []string{"true"}, Class: jobs.ClassCore, Checkpointable: true, Retryable: true,
		Timeout: jobs.Duration(time.Hour), Grace: jobs.Duration(time.Second), Team: team}
}

func TestRouterHoldsCoreWorkUnderShares(t *testing.T) {
	r := controller.Router{ElasticManaged: true, Held: true}
	if q := r.Route(teamSpec("a")); q != queues.QueueHeld {
		t.Errorf("core under shares goes to %s, want held", q)
	}
	burst := teamSpec("a")
	burst.Class = jobs.ClassBurst
	if q := r.Route(burst); q != queues.QueueBurst {
		t.Errorf("burst under shares goes to %s, want burst", q)
	}
	if q := (controller.Router{ElasticManaged: true}).Route(teamSpec("a")); q != queues.QueueCore {
		t.Errorf("core without shares goes to %s, want core", q)
	}
}

// Admit moves a held job to core, fenced, and says whose share it is;
// a rule 9 reclaim of a core loan sends it back to held, readmitted, and
// publishes who takes the slots back.
func TestAdmitAndReclaimUnderShares(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	held, err := store.Submit(ctx, teamSpec("b"), queues.QueueHeld)
	if err != nil {
		t.Fatal(err)
	}
	loan, err := store.Submit(ctx, teamSpec("a"), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	running, ok, err := store.Claim(ctx, queues.Delivery{JobID: loan.Job.ID, Attempt: 1}, "f1")
	if !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if _, err := store.Heartbeat(ctx, queues.WorkerInfo{ID: "f1", Pool: "fixed", Slots: 4, Busy: 1, StartedAt: time.Now().Add(-time.Hour)},
		[]queues.Delivery{{JobID: loan.Job.ID, Attempt: 1}}); err != nil {
		t.Fatal(err)
	}
	log := &eventLog{}
	h := &controller.Hybrid{Store: store, Config: sharesAB(), Pools: fixedPools, Events: log,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	s, err := h.Snapshot(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range s.Jobs {
		if j.ID == held.Job.ID && (j.Queue != policy.QueueHeld || j.Team != "b" || j.Grace != time.Second) {
			t.Fatalf("held job as the policy sees it: %+v", j)
		}
	}
	plan := policy.Plan{Actions: []policy.Action{
		{Kind: policy.Admit, Job: held.Job.ID, Team: "b", Owner: "b", Rule: 9, Reason: "in share: b uses 0 of 2"},
		{Kind: policy.Reclaim, Job: loan.Job.ID, Worker: "f1", Team: "a", Owner: "b", Rule: 9, Reason: "b's share is lent"},
	}}
	if err := h.Apply(ctx, plan, time.Now()); err != nil {
		t.Fatal(err)
	}
	j, _ := store.Get(ctx, held.Job.ID)
	if j.Queue != string(queues.QueueCore) || j.Attempt != 2 || j.State != jobs.StateQueued {
		t.Errorf("admitted job: queue %s attempt %d %s; want core, attempt 2, queued", j.Queue, j.Attempt, j.State)
	}
	// Applying the same plan again changes nothing: the admission was
	// fenced on attempt 1.
	if err := h.Apply(ctx, policy.Plan{Actions: plan.Actions[:1]}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if j, _ := store.Get(ctx, held.Job.ID); j.Attempt != 2 {
		t.Errorf("a second admission moved the job again: attempt %d", j.Attempt)
	}
	// The worker carries the reclaim out as it does any preemption.
	rq, err := store.Requeue(ctx, running, "f1", queues.Requeue{Preempt: true})
	if err != nil {
		t.Fatal(err)
	}
	back, _ := store.Get(ctx, loan.Job.ID)
	if rq.Queue != queues.QueueHeld || back.Queue != string(queues.QueueHeld) || !back.Readmitted {
		t.Errorf("reclaimed core loan: requeued to %s, record %s readmitted %v; want held, readmitted", rq.Queue, back.Queue, back.Readmitted)
	}
	// The admitted job, drained off its worker, waits for admission again:
	// the store remembers that rule 9 admitted it.
	again, ok, err := store.Claim(ctx, queues.Delivery{JobID: held.Job.ID, Attempt: 2}, "f2")
	if !ok || err != nil {
		t.Fatalf("claim of the admitted job: %v %v", ok, err)
	}
	if rq, err := store.Requeue(ctx, again, "f2", queues.Requeue{Reason: "worker draining"}); err != nil || rq.Queue != queues.QueueHeld {
		t.Errorf("admitted job drained: requeued to %s (%v); want held", rq.Queue, err)
	}
	var admitted, reclaimed bool
	for _, e := range log.es {
		sh, ok := events.ParseShare(e)
		switch {
		case !ok:
		case e.Type == events.TypeJobMoved && e.JobID == held.Job.ID:
			admitted = sh.Action == "admit" && sh.Team == "b" && sh.Owner == "b" && sh.Rule == 9 && e.Queue == "core"
		case e.Type == events.TypeJobReclaimed && e.JobID == loan.Job.ID:
			reclaimed = sh.Team == "a" && sh.Owner == "b" && sh.Rule == 9 && e.Worker == "f1" && e.Attempt == 1
		}
	}
	if !admitted || !reclaimed {
		t.Errorf("events (admitted %v, reclaimed %v): %+v", admitted, reclaimed, log.es)
	}
}

// The share view counts what runs on fixed by team: a, on 3 slots of a
// 2-slot share, borrows b's idle slot.
func TestShareViewSplitsFixedUse(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	var ds []queues.Delivery
	for range 3 {
		sub, err := store.Submit(ctx, teamSpec("a"), queues.QueueCore)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := store.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "f1"); !ok || err != nil {
			t.Fatalf("claim: %v %v", ok, err)
		}
		ds = append(ds, queues.Delivery{JobID: sub.Job.ID, Attempt: 1})
	}
	if _, err := store.Submit(ctx, teamSpec("b"), queues.QueueHeld); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Heartbeat(ctx, queues.WorkerInfo{ID: "f1", Pool: "fixed", Slots: 4, Busy: 3, StartedAt: time.Now().Add(-time.Hour)}, ds); err != nil {
		t.Fatal(err)
	}
	h := &controller.Hybrid{Store: store, Config: sharesAB(), Pools: fixedPools, Quota: 4,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	now := time.Now()
	if _, err := h.Tick(ctx, now); err != nil {
		t.Fatal(err)
	}
	v := h.Shares()
	if v.Quota != 4 || v.CommonSlots != 0 || len(v.Teams) != 2 {
		t.Fatalf("view %+v", v)
	}
	a, b := v.Teams[0], v.Teams[1]
	if a.Team != "a" || a.Used != 3 || a.Own != 2 || a.OnLent != 1 || a.Waiting != 0 {
		t.Errorf("team a %+v", a)
	}
	if b.Team != "b" || b.Lent != 1 || b.LentTo["a"] != 1 || b.Idle != 1 || b.Waiting != 1 || b.OwnerWait < 0 {
		t.Errorf("team b %+v", b)
	}
}

// Held work found while shares are off goes to core: nothing else would
// ever admit it.
func TestHeldWorkGoesToCoreWithSharesOff(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	sub, err := store.Submit(ctx, teamSpec("a"), queues.QueueHeld)
	if err != nil {
		t.Fatal(err)
	}
	h := &controller.Hybrid{Store: store, Config: policy.DefaultConfig(), Pools: fixedPools,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if _, err := h.Tick(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if j, _ := store.Get(ctx, sub.Job.ID); j.Queue != string(queues.QueueCore) || j.State != jobs.StateQueued {
		t.Errorf("held job with shares off: queue %s %s; want core, queued", j.Queue, j.State)
	}
}

// Recovery after Redis lost its data keeps a held job held when shares
// are on (rule 9 admits it), and routes it to core when they are not.
func TestRecoverHeldJobs(t *testing.T) {
	t.Parallel()
	for _, held := range []bool{true, false} {
		rdb, ns := testenv.Redis(t)
		store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
		ctx := context.Background()
		if _, err := store.RecordDataLoss(ctx, queues.DataLoss{At: time.Now().Add(-time.Minute), Reason: queues.LossGone, By: "test"}); err != nil {
			t.Fatal(err)
		}
		id := "01a24d00000000000000000held"
		queued := events.Event{ID: id + ".1.job.queued", Type: events.TypeJobQueued, JobID: id, Attempt: 1, State: jobs.StateQueued,
			Queue: string(queues.QueueHeld), Time: time.Now().Add(-time.Hour), Data: map[string]any{events.DataSpec: teamSpec("a")}}
		o := controller.RecoverOptions{Store: store, Logger: quiet, Router: controller.Router{ElasticManaged: true, Held: held},
			Replay: func(_ context.Context, fn func(events.Event)) (int, error) { fn(queued); return 1, nil }}
		rep, err := controller.Recover(ctx, o)
		if err != nil || rep.Rebuilt != 1 {
			t.Fatalf("held %v: recover %+v %v", held, rep, err)
		}
		want := queues.QueueCore
		if held {
			want = queues.QueueHeld
		}
		if j, err := store.Get(ctx, id); err != nil || j.Queue != string(want) {
			t.Errorf("shares on %v: rebuilt into %q (%v), want %s", held, j.Queue, err, want)
		}
	}
}
