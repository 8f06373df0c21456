package controller_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/sweep"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/flows"
)

func (r *flowRig) sweeps() *controller.Sweeps {
	r.t.Helper()
	s, err := controller.NewSweeps(controller.SweepsOptions{Sweeps: r.flows, Jobs: r.store, Submitter: r.sub, Catalog: r.cat, Logger: quiet})
	if err != nil {
		r.t.Fatal(err)
	}
	return s
}

// listSpec is a sweep over lr = 0.1, 0.2, ... with n trials.
func listSpec(n, maxParallel int) sweep.Spec {
	s := sweep.Spec{Template: "trial", MaxParallel: maxParallel, Metric: "loss"}
	for i := 0; i < n; i++ {
		s.Space.List = append(s.Space.List, map[string]json.RawMessage{"lr": json.RawMessage(fmt.Sprintf("%g", float64(i+1)/10))})
	}
	return s
}

// claim starts job id on worker "w" and returns its record.
func (r *flowRig) claim(id string) jobs.Job {
	r.t.Helper()
	j, ok, err := r.store.Claim(r.ctx, queues.Delivery{JobID: id, Attempt: 1}, "w")
	if err != nil || !ok {
		r.t.Fatalf("claim %s: ok=%v err=%v", id, ok, err)
	}
	return j
}

func (r *flowRig) view(id string) controller.SweepView {
	r.t.Helper()
	v, err := controller.LoadSweepView(r.ctx, r.flows, r.store, id)
	if err != nil {
		r.t.Fatal(err)
	}
	return v
}

func (r *flowRig) sweepTick(s *controller.Sweeps) {
	r.t.Helper()
	if err := s.Tick(r.ctx, time.Now()); err != nil {
		r.t.Fatal(err)
	}
}

func TestSweepRunsUnderMaxParallelAndFindsTheBest(t *testing.T) {
	t.Parallel()
	r := newFlowRig(t)
	sw := r.sweeps()
	rc, err := sw.SubmitSweep(r.ctx, listSpec(10, 3))
	if err != nil {
		t.Fatal(err)
	}
	if rc.Trials != 10 || rc.Queued != 3 || rc.Duplicate {
		t.Fatalf("receipt %+v, want 10 trials with 3 queued", rc)
	}
	// The loss is lowest for trial 6 (lr 0.7).
	loss := func(i int) float64 { d := float64(i - 6); return 0.5 + d*d/10 }
	for round := 0; round < 10; round++ {
		v := r.view(rc.SweepID)
		live := v.Summary.Counts[sweep.TrialQueued] + v.Summary.Counts[sweep.TrialRunning]
		if live > 3 {
			t.Fatalf("round %d: %d trials queued or running, over max_parallel 3", round, live)
		}
		if v.Summary.Done {
			break
		}
		for _, tr := range v.Trials {
			if tr.State != sweep.TrialQueued {
				continue
			}
			job := v.Sweep.Trials[tr.Index]
			j := r.claim(job)
			if j.Spec.Labels[controller.LabelSweep] != rc.SweepID || j.Spec.Metric != "loss" || j.Queue == string(queues.QueueCore) {
				t.Fatalf("trial job: queue %s spec %+v", j.Queue, j.Spec)
			}
			if want := float64(tr.Index+1) / 10; j.Spec.Params["lr"] != want {
				t.Fatalf("trial %d has lr %v, want %v", tr.Index, j.Spec.Params["lr"], want)
			}
			for _, m := range []float64{loss(tr.Index) + 1, loss(tr.Index)} {
				if ok, err := r.store.ReportMetric(r.ctx, j, "w", m); err != nil || !ok {
					t.Fatalf("report: %v %v", ok, err)
				}
			}
			code := 0
			if _, err := r.store.Finish(r.ctx, j, "w", jobs.StateSucceeded, &code, ""); err != nil {
				t.Fatal(err)
			}
		}
		r.sweepTick(sw)
	}
	v := r.view(rc.SweepID)
	if v.Sweep.State != flows.SweepCompleted || !v.Summary.Done || v.Summary.Counts[sweep.TrialSucceeded] != 10 {
		t.Fatalf("sweep %s, summary %+v", v.Sweep.State, v.Summary)
	}
	if b := v.Summary.Best; b == nil || b.Index != 6 || b.Metric != 0.5 || v.BestParams["lr"] != 0.7 {
		t.Fatalf("best %+v params %v, want trial 6 with loss 0.5 and lr 0.7", b, v.BestParams)
	}
	if active, _ := r.flows.ActiveSweeps(r.ctx); len(active) != 0 {
		t.Fatalf("active sweeps after completion: %v", active)
	}
}

func TestSweepSubmissionIsIdempotentAndValidated(t *testing.T) {
	t.Parallel()
	r := newFlowRig(t)
	sw := r.sweeps()
	spec := listSpec(4, 0)
	spec.IdempotencyKey = "exp-42"
	a, err := sw.SubmitSweep(r.ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	b, err := sw.SubmitSweep(r.ctx, spec)
	if err != nil || b.SweepID != a.SweepID || !b.Duplicate || b.Queued != 4 {
		t.Fatalf("resubmission: %+v %v (first %+v)", b, err, a)
	}
	other := listSpec(5, 0)
	other.IdempotencyKey = "exp-42"
	if _, err := sw.SubmitSweep(r.ctx, other); !errors.Is(err, jobs.ErrIdempotencyConflict) {
		t.Fatalf("same key, other sweep: %v", err)
	}
	v := r.view(a.SweepID)
	if len(v.Sweep.Trials) != 4 {
		t.Fatalf("%d trials after a duplicate submission, want 4", len(v.Sweep.Trials))
	}

	bad := listSpec(2, 0)
	bad.Template = "nope"
	_, err = sw.SubmitSweep(r.ctx, bad)
	var ve *jobs.ValidationError
	if !errors.As(err, &ve) || ve.Problems[0].Field != "template" {
		t.Fatalf("unknown template: %v", err)
	}
	bad = listSpec(2, 0)
	bad.Space.List[1]["lr"] = json.RawMessage(`"fast"`)
	if _, err = sw.SubmitSweep(r.ctx, bad); !errors.As(err, &ve) || ve.Problems[0].Field != "space.list[1].lr" {
		t.Fatalf("bad parameter: %v", err)
	}
	ids, _ := r.flows.ListSweeps(r.ctx, 10)
	if len(ids) != 1 {
		t.Fatalf("%d sweeps recorded, want only the valid one", len(ids))
	}
}

func TestCancelledSweepLeavesNothingQueuedOrRunning(t *testing.T) {
	t.Parallel()
	r := newFlowRig(t)
	sw := r.sweeps()
	rc, err := sw.SubmitSweep(r.ctx, listSpec(20, 8))
	if err != nil {
		t.Fatal(err)
	}
	v := r.view(rc.SweepID)
	var running []jobs.Job
	for i := 0; i < 3; i++ {
		running = append(running, r.claim(v.Sweep.Trials[i]))
	}
	// A fan-out that died after submitting trial 8 and before recording it.
	orphanSpecs, _ := r.flows.TrialSpecs(r.ctx, rc.SweepID, 8, 9)
	orphanSpecs[0].IdempotencyKey = flows.TrialIdempotencyKey(rc.SweepID, 8)
	orphan, _, err := r.sub.SubmitSpec(r.ctx, orphanSpecs[0])
	if err != nil {
		t.Fatal(err)
	}

	cancelled, err := controller.CancelSweep(r.ctx, r.flows, r.store, rc.SweepID)
	if err != nil || !cancelled {
		t.Fatalf("cancel: %v %v", cancelled, err)
	}
	if again, err := controller.CancelSweep(r.ctx, r.flows, r.store, rc.SweepID); err != nil || again {
		t.Fatalf("second cancel: %v %v", again, err)
	}
	r.sweepTick(sw)
	v = r.view(rc.SweepID)
	if v.Sweep.FinishedAt.IsZero() == false {
		t.Fatal("the sweep finished while trials were still running")
	}
	if v.Sweep.Cursor != 8 || v.Summary.Counts[sweep.TrialQueued] != 0 || v.Summary.Counts[sweep.TrialPending] != 0 {
		t.Fatalf("after cancel: cursor %d, counts %v", v.Sweep.Cursor, v.Summary.Counts)
	}
	if j, _ := r.store.Get(r.ctx, orphan.ID); j.State != jobs.StateCancelled {
		t.Fatalf("the unrecorded trial's job is %s", j.State)
	}
	// The workers act on the cancel.
	for _, j := range running {
		if got, _ := r.store.Get(r.ctx, j.ID); !got.CancelRequested {
			t.Fatalf("running trial %s was not asked to stop", j.ID)
		}
		code := -1
		if _, err := r.store.Finish(r.ctx, j, "w", jobs.StateCancelled, &code, "cancelled"); err != nil {
			t.Fatal(err)
		}
	}
	r.sweepTick(sw)
	v = r.view(rc.SweepID)
	if v.Sweep.State != flows.SweepCancelled || v.Sweep.FinishedAt.IsZero() || v.Summary.Counts[sweep.TrialCancelled] != 20 {
		t.Fatalf("sweep %s finished %v counts %v", v.Sweep.State, v.Sweep.FinishedAt, v.Summary.Counts)
	}
	// Nothing is enqueued after the cancel, however often the leader ticks.
	r.sweepTick(sw)
	if v2 := r.view(rc.SweepID); len(v2.Sweep.Trials) != len(v.Sweep.Trials) {
		t.Fatalf("trials enqueued after the cancel: %d -> %d", len(v.Sweep.Trials), len(v2.Sweep.Trials))
	}
}

func TestMedianRuleStopsTheWorseTrial(t *testing.T) {
	t.Parallel()
	r := newFlowRig(t)
	sw := r.sweeps()
	spec := listSpec(4, 0)
	spec.EarlyStop = &sweep.MedianRule{MinTrials: 2}
	rc, err := sw.SubmitSweep(r.ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	v := r.view(rc.SweepID)
	// Trials 0-2 tie at step 1; trial 3 is far worse than their median.
	curves := [][]float64{{1.0, 0.8}, {1.1, 0.8}, {1.2, 0.8}, {3.0, 2.9}}
	js := make([]jobs.Job, 4)
	for i := range js {
		js[i] = r.claim(v.Sweep.Trials[i])
		for _, m := range curves[i] {
			if _, err := r.store.ReportMetric(r.ctx, js[i], "w", m); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.sweepTick(sw)
	for i, j := range js {
		got, _ := r.store.Get(r.ctx, j.ID)
		if got.CancelRequested != (i == 3) {
			t.Fatalf("trial %d: stop requested %v", i, got.CancelRequested)
		}
	}
	code := -1
	if _, err := r.store.Finish(r.ctx, js[3], "w", jobs.StateCancelled, &code, ""); err != nil {
		t.Fatal(err)
	}
	v = r.view(rc.SweepID)
	if v.Trials[3].State != sweep.TrialStopped || v.Summary.Counts[sweep.TrialRunning] != 3 {
		t.Fatalf("trial 3 is %s; counts %v", v.Trials[3].State, v.Summary.Counts)
	}
}
