package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/sweep"
	"github.com/ballastdev/ballast/queues/flows"
)

// startSweepIntake serves job and sweep submissions over NATS, as
// `ballast controller` does.
func (r *hybridRig) startSweepIntake(sw *controller.Sweeps) {
	r.t.Helper()
	in, err := intake.NewNATSServer(r.nc, r.sub, intake.NATSOptions{Subjects: r.subj, Logger: quietLogger(), Sweeps: sw})
	if err != nil {
		r.t.Fatal(err)
	}
	if err := in.Start(context.Background()); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(in.Stop)
}

// gridSpec is a 20 x 10 grid of hy-trial: lr 0.00..0.95, layers 1..10.
func gridSpec(seconds float64, maxParallel int) sweep.Spec {
	var lrs, layers []json.RawMessage
	for i := 0; i < 20; i++ {
		lrs = append(lrs, json.RawMessage(fmt.Sprintf("%.2f", float64(i)*0.05)))
	}
	for l := 1; l <= 10; l++ {
		layers = append(layers, json.RawMessage(strconv.Itoa(l)))
	}
	return sweep.Spec{Template: "hy-trial", Metric: "loss", MaxParallel: maxParallel,
		Space:  sweep.Space{Grid: map[string][]json.RawMessage{"lr": lrs, "layers": layers}},
		Fixed:  map[string]json.RawMessage{"seconds": json.RawMessage(strconv.FormatFloat(seconds, 'f', -1, 64))},
		Labels: map[string]string{"experiment": "e2e"}}
}

func (r *hybridRig) sweepView(id string) controller.SweepView {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v, err := controller.LoadSweepView(ctx, flows.New(r.store), r.store, id)
	if err != nil {
		r.t.Fatalf("LoadSweepView: %v", err)
	}
	return v
}

// TestSweep200TrialsOverNATS: a 200-trial grid sent on ballast.sweeps.submit
// is recorded and fully enqueued before the reply; every trial runs once on
// the fixed worker and reports its loss; the summary counts 200 successes
// and the best trial is the grid point the loss function puts first.
func TestSweep200TrialsOverNATS(t *testing.T) {
	t.Parallel()
	r := newHybridRig(t, config.Dev().Pools, 0.7, 0.4)
	_, sw := r.startFlowController("ctl-a")
	r.startSweepIntake(sw)
	r.startFixedWorker("fixed-1", 8)

	spec := gridSpec(0, 0)
	spec.IdempotencyKey = "e2e-grid-200"
	cl := client.NewNATS(testenv.NATSConn(t, r.srv), r.subj)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	submitted := time.Now()
	rc, err := cl.SubmitSweep(ctx, spec)
	if err != nil {
		t.Fatalf("SubmitSweep: %v", err)
	}
	queuedIn := time.Since(submitted)
	if rc.Trials != 200 || rc.Queued != 200 || rc.Duplicate {
		t.Fatalf("receipt %+v, want 200 trials all queued", rc)
	}
	if again, err := cl.SubmitSweep(ctx, spec); err != nil || again.SweepID != rc.SweepID || !again.Duplicate {
		t.Fatalf("resubmitting with the same key: %+v %v", again, err)
	}
	t.Logf("sweep submit -> all 200 trials queued: %s over NATS (%.0f trials/s)", queuedIn.Round(time.Millisecond),
		200/queuedIn.Seconds())

	testenv.Eventually(t, 90*time.Second, "the sweep completes", func() bool {
		return r.sweepView(rc.SweepID).Sweep.State == flows.SweepCompleted
	})
	ran := time.Since(submitted)
	v := r.sweepView(rc.SweepID)
	if v.Sweep.State != flows.SweepCompleted || v.Summary.Counts[sweep.TrialSucceeded] != 200 {
		t.Fatalf("sweep %s, counts %v", v.Sweep.State, v.Summary.Counts)
	}
	// The expected best, from the same function the trials compute.
	trials, err := sweep.Expand(spec, mustCatalog(t, r))
	if err != nil {
		t.Fatal(err)
	}
	best, bestLoss := -1, math.Inf(1)
	for _, tr := range trials {
		var lr float64
		var layers int
		_ = json.Unmarshal(tr.Params["lr"], &lr)
		_ = json.Unmarshal(tr.Params["layers"], &layers)
		l, _ := strconv.ParseFloat(fmt.Sprintf("%.6f", (lr-0.35)*(lr-0.35)+float64((layers-3)*(layers-3))/100), 64)
		if l < bestLoss {
			best, bestLoss = tr.Index, l
		}
	}
	if b := v.Summary.Best; b == nil || b.Index != best || b.Metric != bestLoss {
		t.Fatalf("best %+v, want trial %d with loss %g", b, best, bestLoss)
	}
	if v.BestParams["lr"] != 0.35 || v.BestParams["layers"] != float64(3) {
		t.Fatalf("best params %v", v.BestParams)
	}
	for i, id := range v.Sweep.Trials {
		j := r.job(id)
		if j.State != jobs.StateSucceeded || j.Attempt != 1 || j.LastMetric == nil || j.Spec.Labels["experiment"] != "e2e" {
			t.Fatalf("trial %d job %s: state %s attempt %d metric %v labels %v", i, id, j.State, j.Attempt, j.LastMetric, j.Spec.Labels)
		}
	}
	t.Logf("200 trials ran on 8 slots in %s; best trial %d, loss %g", ran.Round(time.Millisecond), best, bestLoss)
}

// TestCancelSweepMidwayLeavesNothingQueuedOrRunning: a 200-trial sweep of
// half-second trials, six at a time, is cancelled after ten succeed. No
// trial is queued or running afterwards, none is enqueued later, the worker
// is idle, and the sweep ends cancelled with the finished trials kept.
func TestCancelSweepMidwayLeavesNothingQueuedOrRunning(t *testing.T) {
	t.Parallel()
	r := newHybridRig(t, config.Dev().Pools, 0.7, 0.4)
	_, sw := r.startFlowController("ctl-a")
	r.startSweepIntake(sw)
	r.startFixedWorker("fixed-1", 8)
	cl := client.NewNATS(testenv.NATSConn(t, r.srv), r.subj)
	ctx := context.Background()
	rc, err := cl.SubmitSweep(ctx, gridSpec(0.5, 6))
	if err != nil {
		t.Fatal(err)
	}
	if rc.Queued != 6 {
		t.Fatalf("queued %d at submission, want max_parallel 6", rc.Queued)
	}
	testenv.Eventually(t, 60*time.Second, "ten trials succeed", func() bool {
		return r.sweepView(rc.SweepID).Summary.Counts[sweep.TrialSucceeded] >= 10
	})
	cancelledAt := time.Now()
	if ok, err := controller.CancelSweep(ctx, flows.New(r.store), r.store, rc.SweepID); err != nil || !ok {
		t.Fatalf("CancelSweep: %v %v", ok, err)
	}
	testenv.Eventually(t, 20*time.Second, "the cancelled sweep ends", func() bool {
		return !r.sweepView(rc.SweepID).Sweep.FinishedAt.IsZero()
	})
	t.Logf("cancel -> no trial queued or running: %s", time.Since(cancelledAt).Round(time.Millisecond))
	time.Sleep(time.Second) // any late enqueue would show now
	v := r.sweepView(rc.SweepID)
	c := v.Summary.Counts
	if v.Sweep.State != flows.SweepCancelled || c[sweep.TrialQueued]+c[sweep.TrialRunning]+c[sweep.TrialPending] != 0 ||
		c[sweep.TrialSucceeded] < 10 || c[sweep.TrialSucceeded]+c[sweep.TrialCancelled] != 200 {
		t.Fatalf("after cancel: state %s counts %v", v.Sweep.State, c)
	}
	// Every trial ever submitted, recorded or not, has ended.
	keys := make([]string, 200)
	for i := range keys {
		keys[i] = flows.TrialIdempotencyKey(rc.SweepID, i)
	}
	submitted, err := r.store.JobsByKey(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(submitted) != len(v.Sweep.Trials) {
		t.Fatalf("%d trial jobs exist, %d recorded", len(submitted), len(v.Sweep.Trials))
	}
	for key, id := range submitted {
		if st := r.job(id).State; !st.Terminal() {
			t.Fatalf("trial %s job %s is %s after the cancel", key, id, st)
		}
	}
	stats, err := r.store.QueueStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range stats {
		if q.Pending+q.Active+q.Scheduled != 0 {
			t.Fatalf("queue %s still holds tasks: %+v", q.Queue, q)
		}
	}
	for _, w := range r.workers() {
		if w.Busy != 0 {
			t.Fatalf("worker %s is busy with %d jobs after the cancel", w.ID, w.Busy)
		}
	}
}

func mustCatalog(t *testing.T, r *hybridRig) *jobs.Catalog {
	t.Helper()
	cat, err := r.cfg.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	return cat
}
