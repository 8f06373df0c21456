package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/pipeline"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/flows"
	"github.com/ballastdev/ballast/workers"
)

// overflowPools is a fixed pool of fixedSlots, an on-demand pool and a
// cheaper spot pool, both of one-slot workers that start in 300 ms. Spot is
// the cheapest elastic capacity on purpose: core work must still never go
// there.
func overflowPools(fixedSlots int) map[string]config.PoolConfig {
	elastic := func(kind config.PoolKind, price float64) config.PoolConfig {
		return config.PoolConfig{Kind: kind, PricePerSlotHour: price, Billing: config.BillingPerSecond,
			StartupDelay: jobs.Duration(300 * time.Millisecond), IdleTTL: jobs.Duration(time.Hour), MaxWorkers: 2, SlotsPerWorker: 1}
	}
	return map[string]config.PoolConfig{
		"fixed":    {Kind: config.PoolFixed, Slots: fixedSlots, PricePerSlotHour: 1},
		"ondemand": elastic(config.PoolOnDemand, 2.5),
		"spot":     elastic(config.PoolSpot, 0.5),
	}
}

// overflowing sets rule 7 on (or off) with a global max wait.
func overflowing(on bool, wait time.Duration) func(*config.Config) {
	return func(c *config.Config) {
		w := jobs.Duration(wait)
		c.Capacity.CoreOverflow, c.Capacity.CoreMaxWait = on, &w
	}
}

// startSpotWorker starts an in-process spot worker reading exactly what a
// spot worker reads, so a job it could take would show up on it.
func (r *hybridRig) startSpotWorker(id string) *workers.Worker {
	r.t.Helper()
	return r.startWorker(workers.Options{ID: id, Pool: "spot", Spot: true, Slots: 1, Queues: queues.ElasticQueues(false, "")})
}

// fillFixed submits n long core jobs and waits until they hold the fixed
// worker's n slots.
func (r *hybridRig) fillFixed(fixed *workers.Worker, n int) {
	r.t.Helper()
	var ids []string
	for i := range n {
		ids = append(ids, r.submitSleep("core-long-"+string(rune('a'+i)), jobs.ClassCore, 60))
	}
	testenv.Eventually(r.t, 10*time.Second, "the long core jobs holding the fixed slots", func() bool {
		for _, id := range ids {
			j := r.job(id)
			r.mustNotFail(j)
			if j.State != jobs.StateRunning || j.Worker != fixed.ID() {
				return false
			}
		}
		return true
	})
}

// overflowOf waits for the job.overflowed event of job id and returns it:
// its Time is when the controller moved the job (a move keeps the job's
// QueuedAt, so its wait goes on counting).
func overflowOf(t *testing.T, evs *testenv.EventLog, id string) events.Overflow {
	t.Helper()
	var got events.Overflow
	testenv.Eventually(t, 5*time.Second, "the job.overflowed event of "+id, func() bool {
		return evs.Any(func(e events.Event) bool {
			o, ok := events.ParseOverflow(e)
			if ok && o.JobID == id {
				got = o
			}
			return ok && o.JobID == id
		})
	})
	return got
}

// TestHybridCoreOverflowToOnDemand: the 2-slot fixed quota is full of long
// core jobs. With core_overflow on and core_max_wait 2s, a third core job
// moves to the overflow queue within a tick of its 2 s, an on-demand worker
// is launched for it and runs it; the idle spot worker, cheaper, never
// takes it. The move is published as job.overflowed.
func TestHybridCoreOverflowToOnDemand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	const wait = 2 * time.Second
	r := newHybridRigWith(t, overflowPools(2), 0.7, 0.4, overflowing(true, wait))
	fixed := r.startFixedWorker("fixed-1", 2)
	spot := r.startSpotWorker("spot-1")
	prov := r.localProvider(map[string]time.Duration{"ondemand": 300 * time.Millisecond, "spot": 300 * time.Millisecond})
	evs := testenv.CollectEvents(t, r.nc, r.subj.All())
	r.startController("ctl-1", r.capacity(prov))
	r.fillFixed(fixed, 2)

	id := r.submitSleep("core-third", jobs.ClassCore, 1)
	first := r.job(id)
	if first.Queue != string(queues.QueueCore) {
		t.Fatalf("the third core job was routed to %s, want core", first.Queue)
	}
	var moved jobs.Job
	testenv.Eventually(t, wait+10*hyTick, "the third core job overflowed", func() bool {
		moved = r.job(id)
		r.mustNotFail(moved)
		return moved.Attempt > 1
	})
	if moved.Attempt != 2 || (moved.Queue != string(queues.QueueOverflow) && moved.State == jobs.StateQueued) {
		t.Fatalf("after the overflow: attempt %d in %s (%s), want attempt 2 in overflow", moved.Attempt, moved.Queue, moved.State)
	}
	ev := overflowOf(t, evs, id)
	if ev.Attempt != 2 || ev.Pool != "ondemand" || ev.Queue != string(queues.QueueOverflow) {
		t.Errorf("job.overflowed %+v, want attempt 2 to overflow for pool ondemand", ev)
	}
	due := first.QueuedAt.Add(wait)
	late := ev.Time.Sub(due)
	t.Logf("overflow reaction (max wait reached -> moved to overflow): %s (tick %s)", late.Round(time.Millisecond), hyTick)
	if late < 0 || late > 2*hyTick {
		t.Errorf("moved %s after its max wait, want within a tick (%s; allowed 0..%s)", late, hyTick, 2*hyTick)
	}

	var done jobs.Job
	testenv.Eventually(t, 15*time.Second, "the overflowed job succeeded", func() bool {
		done = r.job(id)
		r.mustNotFail(done)
		return done.State == jobs.StateSucceeded
	})
	if done.Pool != "ondemand" || done.Worker == spot.ID() || done.Worker == fixed.ID() {
		t.Errorf("the overflowed job ran on %q in pool %q, want an on-demand worker", done.Worker, done.Pool)
	}
	if done.Attempt != 2 {
		t.Errorf("the job ended on attempt %d, want 2 (one move, nothing run twice)", done.Attempt)
	}
	t.Logf("overflow to start on on-demand: %s (start-up delay 300ms)", done.StartedAt.Sub(ev.Time).Round(time.Millisecond))
	for _, in := range listInstances(t, prov) {
		if in.Pool != "ondemand" {
			t.Errorf("instance %s launched in pool %q: core overflow must launch on-demand only", in.ID, in.Pool)
		}
	}
}

// TestHybridCoreWaitsWithOverflowOff: the same full quota with core_overflow
// off: the third core job stays queued in core past the 2 s and several
// ticks, and nothing is launched for it.
func TestHybridCoreWaitsWithOverflowOff(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	const wait = 2 * time.Second
	r := newHybridRigWith(t, overflowPools(2), 0.7, 0.4, overflowing(false, wait))
	fixed := r.startFixedWorker("fixed-1", 2)
	prov := r.localProvider(map[string]time.Duration{"ondemand": 300 * time.Millisecond, "spot": 300 * time.Millisecond})
	r.startController("ctl-1", r.capacity(prov))
	r.fillFixed(fixed, 2)

	id := r.submitSleep("core-third", jobs.ClassCore, 1)
	until := r.job(id).QueuedAt.Add(wait + 5*hyTick)
	// "Nothing happens" is a window: check it on every poll until the
	// overflow would have been long done.
	for time.Now().Before(until) {
		j := r.job(id)
		if j.State != jobs.StateQueued || j.Queue != string(queues.QueueCore) || j.Attempt != 1 {
			t.Fatalf("with overflow off the job is %s in %s (attempt %d), want queued in core", j.State, j.Queue, j.Attempt)
		}
		if n := len(listInstances(t, prov)); n != 0 {
			t.Fatalf("%d elastic launches with overflow off, want none", n)
		}
		time.Sleep(hyTick / 4) // a poll interval, not a wait for an outcome
	}
}

// TestHybridPipelineStepOverflowsToMeetItsDeadline: a pipeline with a 10 s
// deadline runs once on a free quota, which makes its step's history. Run
// again with the quota full and a global max wait of an hour, the core step
// may wait only until its latest start (deadline less the p90 of its past
// runs and the overflow lead): it overflows then, not at once and not after
// an hour, runs on on-demand, and the run meets its deadline.
func TestHybridPipelineStepOverflowsToMeetItsDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	const lead = 2 * time.Second
	r := newHybridRigWith(t, overflowPools(1), 0.7, 0.4, overflowing(true, time.Hour))
	r.setPipelines(map[string]pipeline.Pipeline{"due": {Schedule: "0 0 1 1 *", Deadline: "10s", Overlap: pipeline.OverlapAllow,
		Steps: map[string]pipeline.Step{"work": {Template: "hy-sleep", Params: map[string]any{"seconds": 1.0}}}}}, time.Second)
	fixed := r.startFixedWorker("fixed-1", 1)
	prov := r.localProvider(map[string]time.Duration{"ondemand": 300 * time.Millisecond, "spot": 300 * time.Millisecond})
	evs := testenv.CollectEvents(t, r.nc, r.subj.All())
	cat, err := r.cfg.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	pl, err := controller.NewPipelines(controller.PipelinesOptions{Runs: flows.New(r.store), Jobs: r.store, Submitter: r.sub, Catalog: cat,
		Pipelines: r.cfg.Pipelines, Grace: time.Second, OverflowLead: lead, Events: r.pub, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := controller.New(r.store, controller.Options{ID: "ctl-1", Tick: hyTick, WorkerTTL: hyWorkerTTL, LeaderTTL: hyLeaderTTL,
		Events: r.pub, Logger: quietLogger(), Pipelines: pl, Capacity: r.capacity(prov)})
	if err != nil {
		t.Fatal(err)
	}
	if err := ctl.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctl.Stop)
	testenv.Eventually(t, 5*time.Second, "the controller leads", ctl.Leader)

	ctx := context.Background()
	runStep := func() (flows.Run, jobs.Job) {
		t.Helper()
		run, err := pl.Trigger(ctx, "due", time.Now())
		if err != nil {
			t.Fatalf("trigger: %v", err)
		}
		var job jobs.Job
		testenv.Eventually(t, 5*time.Second, "the step submitted", func() bool {
			got, err := flows.New(r.store).GetRun(ctx, run.ID)
			if err != nil || got.Steps["work"].JobID == "" {
				return false
			}
			run, job = got, r.job(got.Steps["work"].JobID)
			return true
		})
		return run, job
	}

	// The history: one run on the free quota.
	_, past := runStep()
	testenv.Eventually(t, 10*time.Second, "the first run's step succeeded", func() bool {
		past = r.job(past.ID)
		r.mustNotFail(past)
		return past.State == jobs.StateSucceeded
	})
	took := past.FinishedAt.Sub(past.StartedAt)

	r.fillFixed(fixed, 1)
	run, step := runStep()
	wantStartBy := run.Deadline.Add(-took - lead)
	if d := step.Spec.StartBy.Sub(wantStartBy); d != 0 {
		t.Fatalf("the step's latest start is %s, want deadline %s less its past %s and the lead %s (%s): off by %s",
			step.Spec.StartBy, run.Deadline, took, lead, wantStartBy, d)
	}
	var moved jobs.Job
	testenv.Eventually(t, 12*time.Second, "the step overflowed", func() bool {
		moved = r.job(step.ID)
		r.mustNotFail(moved)
		return moved.Attempt > 1
	})
	at := overflowOf(t, evs, step.ID).Time
	t.Logf("step overflowed %s after its latest start, %s before the deadline (history %s, lead %s)",
		at.Sub(step.Spec.StartBy).Round(time.Millisecond), run.Deadline.Sub(at).Round(time.Millisecond), took.Round(time.Millisecond), lead)
	if at.Before(step.Spec.StartBy) || at.After(step.Spec.StartBy.Add(2*hyTick)) {
		t.Errorf("overflowed at %s, want at its latest start %s (within a tick)", at, step.Spec.StartBy)
	}
	testenv.Eventually(t, 15*time.Second, "the second run ended", func() bool {
		got, err := flows.New(r.store).GetRun(ctx, run.ID)
		run = got
		return err == nil && got.State != pipeline.RunRunning
	})
	done := r.job(step.ID)
	if run.State != pipeline.RunSucceeded || done.Pool != "ondemand" {
		t.Fatalf("run %s, step ran in pool %q; want succeeded on ondemand", run.State, done.Pool)
	}
	if !done.FinishedAt.Before(run.Deadline) || !run.DeadlineMissedAt.IsZero() {
		t.Errorf("the step finished at %s, deadline %s: missed", done.FinishedAt, run.Deadline)
	}
	t.Logf("deadline met with %s to spare", run.Deadline.Sub(done.FinishedAt).Round(time.Millisecond))
}
