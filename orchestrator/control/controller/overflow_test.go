package controller_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/queues"
)

// eventLog keeps what the controller publishes, in order.
type eventLog struct {
	mu sync.Mutex
	es []events.Event
}

func (l *eventLog) Publish(_ context.Context, e events.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.es = append(l.es, e)
	return nil
}

func (l *eventLog) overflows() []events.Overflow {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []events.Overflow
	for _, e := range l.es {
		if o, ok := events.ParseOverflow(e); ok {
			out = append(out, o)
		}
	}
	return out
}

// A pinned core job that waited past its own max wait with fixed full moves,
// fenced, to overflow@REGION and is published; once it runs on on-demand and
// fixed cools, the checkpointable job migrates back to core, not loan.
func TestOverflowMovesCoreWorkToOnDemandAndBack(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	now := time.Now()
	beat := beater(t, store, now.Add(-time.Hour))
	core := func(own *jobs.Duration) jobs.Job {
		t.Helper()
		spec := jobs.Spec{Command: []string{"true"}, Class: jobs.ClassCore, Checkpointable: true,
			Timeout: jobs.Duration(time.Hour), Grace: jobs.Duration(time.Second),
			Labels: map[string]string{jobs.RegionLabel: "eu"}, CoreMaxWait: own}
		sub, err := store.Submit(ctx, spec, queues.QueueCore)
		if err != nil {
			t.Fatal(err)
		}
		return sub.Job
	}
	zero := jobs.Duration(0)
	// Two fixed slots, both busy: the high watermark (0.70) leaves one slot
	// to migrate into once they are free.
	var blockers []jobs.Job
	var busy []queues.Delivery
	for range 2 {
		b, ok, err := store.Claim(ctx, queues.Delivery{JobID: core(nil).ID, Attempt: 1}, "f1")
		if !ok || err != nil {
			t.Fatalf("claim: %v %v", ok, err)
		}
		blockers = append(blockers, b)
		busy = append(busy, queues.Delivery{JobID: b.ID, Attempt: 1})
	}
	beat("f1", "fixed", 2, busy...)
	waiting := core(&zero) // its own wait, 0: at once; the global 30m would hold it

	cfg := policy.DefaultConfig()
	cfg.CoreOverflow = true
	pools := []policy.Pool{
		{Name: "fixed", Kind: policy.PoolFixed, Region: "eu", PricePerSlotHour: 0.5},
		{Name: "spot-eu", Kind: policy.PoolSpot, Region: "eu", PricePerSlotHour: 0.2, MaxWorkers: 4, SlotsPerWorker: 1, IdleTTL: time.Hour, Billing: policy.BillingPerSecond},
		{Name: "od-eu", Kind: policy.PoolOnDemand, Region: "eu", PricePerSlotHour: 1.5, MaxWorkers: 4, SlotsPerWorker: 1, IdleTTL: time.Hour, Billing: policy.BillingPerSecond},
		{Name: "od-us", Kind: policy.PoolOnDemand, Region: "us", PricePerSlotHour: 1.0, MaxWorkers: 4, SlotsPerWorker: 1, IdleTTL: time.Hour, Billing: policy.BillingPerSecond},
	}
	log := &eventLog{}
	h := &controller.Hybrid{Store: store, Config: cfg, Pools: pools, Events: log,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}

	if _, err := h.Tick(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	j, _ := store.Get(ctx, waiting.ID)
	if j.Queue != "overflow@eu" || j.Attempt != 2 || j.State != jobs.StateQueued {
		t.Fatalf("after the tick: queue %s attempt %d %s; want overflow@eu, attempt 2, queued", j.Queue, j.Attempt, j.State)
	}
	os := log.overflows()
	if len(os) != 1 || os[0].JobID != waiting.ID || os[0].Pool != "od-eu" || os[0].Attempt != 2 || os[0].Queue != "overflow@eu" {
		t.Fatalf("overflow events %+v; want one for %s to od-eu", os, waiting.ID)
	}
	// The overflowed job is on-demand demand in the snapshot, for the pool
	// rule 7 chose, and the next tick neither moves it again nor overflows
	// the blocker, which runs.
	s, err := h.Snapshot(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, pj := range s.Jobs {
		if pj.ID == waiting.ID && (pj.Queue != policy.QueueOverflow || pj.Pool != "od-eu" || !pj.HasMaxWait || pj.MaxWait != 0) {
			t.Fatalf("snapshot job %+v; want overflow for od-eu with its own wait 0", pj)
		}
	}
	if err := s.Validate(); err != nil {
		t.Fatalf("the snapshot does not validate: %v", err)
	}
	// A controller that did not make the move (a restart, a new leader)
	// counts the job against the cheapest on-demand pool of its region:
	// od-eu, not the cheaper od-us.
	fresh := &controller.Hybrid{Store: store, Config: cfg, Pools: pools, Logger: h.Logger}
	s2, err := fresh.Snapshot(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, pj := range s2.Jobs {
		if pj.ID == waiting.ID && pj.Pool != "od-eu" {
			t.Fatalf("after a restart the overflowed job counts for pool %q, want od-eu", pj.Pool)
		}
	}
	plan, err := h.Tick(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range plan.Actions {
		if a.Kind == policy.Overflow {
			t.Fatalf("planned again: %s", a)
		}
	}
	if j2, _ := store.Get(ctx, waiting.ID); j2.Attempt != 2 || len(log.overflows()) != 1 {
		t.Fatalf("moved again: attempt %d, %d events", j2.Attempt, len(log.overflows()))
	}

	// It runs on an on-demand worker; the blocker finishes and fixed cools.
	run, ok, err := store.Claim(ctx, queues.Delivery{JobID: waiting.ID, Attempt: 2}, "od-1")
	if !ok || err != nil {
		t.Fatalf("claim on od-1: %v %v", ok, err)
	}
	beat("od-1", "od-eu", 1, queues.Delivery{JobID: run.ID, Attempt: 2})
	for _, b := range blockers {
		if ok, err := store.Finish(ctx, b, "f1", jobs.StateSucceeded, nil, ""); !ok || err != nil {
			t.Fatalf("finish: %v %v", ok, err)
		}
	}
	beat("f1", "fixed", 2)
	plan, err = h.Tick(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var migrated bool
	for _, a := range plan.Actions {
		migrated = migrated || (a.Kind == policy.Migrate && a.Job == waiting.ID && a.Queue == policy.QueueCore)
	}
	if !migrated {
		t.Fatalf("plan %v; want %s migrated to core", plan.Actions, waiting.ID)
	}
	// The worker acts on the preempt request: the next attempt waits in core.
	if _, err := store.Requeue(ctx, run, "od-1", queues.Requeue{Preempt: true}); err != nil {
		t.Fatal(err)
	}
	if back, _ := store.Get(ctx, waiting.ID); back.Queue != string(queues.QueueCore) || back.Attempt != 3 {
		t.Fatalf("after the migration: queue %s attempt %d; want core, 3", back.Queue, back.Attempt)
	}
}
