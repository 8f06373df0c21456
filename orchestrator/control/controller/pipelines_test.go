package controller_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/pipeline"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/flows"
)

// flowRig is a pipeline runner on a real Redis namespace with a catalog of
// no-op templates. Jobs are moved by claiming and finishing them through
// the store, as a worker would.
type flowRig struct {
	t     testing.TB
	ctx   context.Context
	store *queues.Store
	flows *flows.Store
	cat   *jobs.Catalog
	sub   *controller.Submitter
}

func newFlowRig(t *testing.T) *flowRig { return newFlowRigTB(t) }

func newFlowRigTB(t testing.TB) *flowRig {
	t.Helper()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	tmpl := func(class jobs.Class, retries int) jobs.Template {
		return jobs.Template{Command: []string{"true"}, Class: class, MaxRetries: &retries,
			Params: map[string]jobs.ParamSpec{"day": {Type: jobs.ParamString, Default: "today"}}}
	}
	cat, err := jobs.NewCatalog(map[string]jobs.Template{
		"etl":    tmpl(jobs.ClassCore, 0),
		"report": tmpl(jobs.ClassBurst, 0),
		"trial": {Command: []string{"true"}, Class: jobs.ClassBurst, Checkpointable: true, Retryable: true,
			Params: map[string]jobs.ParamSpec{"lr": {Type: jobs.ParamFloat, Required: true}, "layers": {Type: jobs.ParamInt, Default: 2}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	sub := &controller.Submitter{Catalog: cat, Store: store, Router: controller.Router{ElasticManaged: true}}
	return &flowRig{t: t, ctx: context.Background(), store: store, flows: flows.New(store), cat: cat, sub: sub}
}

func (r *flowRig) runner(defs map[string]pipeline.Pipeline) *controller.Pipelines {
	r.t.Helper()
	p, err := controller.NewPipelines(controller.PipelinesOptions{Runs: r.flows, Jobs: r.store, Submitter: r.sub, Catalog: r.cat,
		Pipelines: defs, Grace: 30 * time.Second, Logger: quiet})
	if err != nil {
		r.t.Fatal(err)
	}
	return p
}

func (r *flowRig) tick(p *controller.Pipelines, now time.Time) {
	r.t.Helper()
	if err := p.Tick(r.ctx, now); err != nil {
		r.t.Fatalf("tick at %s: %v", now, err)
	}
}

// finish runs job id to state as worker "w" would.
func (r *flowRig) finish(id string, state jobs.State) {
	r.t.Helper()
	j, err := r.store.Get(r.ctx, id)
	if err != nil {
		r.t.Fatal(err)
	}
	j, ok, err := r.store.Claim(r.ctx, queues.Delivery{JobID: id, Attempt: j.Attempt}, "w")
	if err != nil || !ok {
		r.t.Fatalf("claim %s: ok=%v err=%v", id, ok, err)
	}
	code := 0
	if state != jobs.StateSucceeded {
		code = 1
	}
	if ok, err := r.store.Finish(r.ctx, j, "w", state, &code, ""); err != nil || !ok {
		r.t.Fatalf("finish %s: ok=%v err=%v", id, ok, err)
	}
}

func (r *flowRig) runs(name string) []flows.Run {
	r.t.Helper()
	runs, err := r.flows.ListRuns(r.ctx, name, 100)
	if err != nil {
		r.t.Fatal(err)
	}
	return runs
}

func (r *flowRig) run(id string) flows.Run {
	r.t.Helper()
	run, err := r.flows.GetRun(r.ctx, id)
	if err != nil {
		r.t.Fatal(err)
	}
	return run
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func stepStates(run flows.Run) map[string]pipeline.StepState { return run.StepStates() }

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// nightly: extract -> transform -> {train, report}; report is post-processing.
func nightly() pipeline.Pipeline {
	return pipeline.Pipeline{Schedule: "0 2 * * *", Deadline: "1h", Steps: map[string]pipeline.Step{
		"extract":   {Template: "etl", Params: map[string]any{"day": "d1"}},
		"transform": {Template: "etl", DependsOn: []string{"extract"}},
		"train":     {Template: "etl", DependsOn: []string{"transform"}},
		"report":    {Template: "report", DependsOn: []string{"transform"}, PostProcessing: true},
	}}
}

func TestPipelineFiresOnTimeAndRunsItsDAGInOrder(t *testing.T) {
	t.Parallel()
	r := newFlowRig(t)
	p := r.runner(map[string]pipeline.Pipeline{"nightly": nightly()})

	r.tick(p, at("2026-03-10T01:59:59Z"))
	if n := len(r.runs("nightly")); n != 0 {
		t.Fatalf("%d runs before the scheduled time", n)
	}
	fire := at("2026-03-10T02:00:00.400Z")
	r.tick(p, fire)
	r.tick(p, fire.Add(time.Second)) // the same time is never fired twice
	runs := r.runs("nightly")
	if len(runs) != 1 {
		t.Fatalf("want 1 run, got %d", len(runs))
	}
	run := runs[0]
	if !run.Scheduled.Equal(at("2026-03-10T02:00:00Z")) || run.Trigger != flows.TriggerSchedule || run.State != pipeline.RunRunning {
		t.Fatalf("run: %+v", run)
	}
	if !run.Deadline.Equal(at("2026-03-10T03:00:00Z")) {
		t.Fatalf("deadline %s, want 03:00 (1h after the scheduled time)", run.Deadline)
	}
	want := map[string]pipeline.StepState{"extract": pipeline.StepRunning, "transform": pipeline.StepPending,
		"train": pipeline.StepPending, "report": pipeline.StepPending}
	assertSteps(t, run, want)

	// The step is a real job: core queue, params passed, labelled with the run.
	ext, err := r.store.Get(r.ctx, run.Steps["extract"].JobID)
	if err != nil {
		t.Fatal(err)
	}
	if ext.Queue != string(queues.QueueCore) || ext.Spec.Params["day"] != "d1" || ext.Spec.Labels[pipeline.LabelRun] != run.ID ||
		ext.Spec.Rhythm != jobs.RhythmPeriodic {
		t.Fatalf("extract job: queue %s spec %+v", ext.Queue, ext.Spec)
	}

	r.finish(ext.ID, jobs.StateSucceeded)
	r.tick(p, fire.Add(2*time.Second))
	run = r.run(run.ID)
	want["extract"], want["transform"] = pipeline.StepSucceeded, pipeline.StepRunning
	assertSteps(t, run, want)

	r.finish(run.Steps["transform"].JobID, jobs.StateSucceeded)
	r.tick(p, fire.Add(3*time.Second))
	run = r.run(run.ID)
	want["transform"], want["train"], want["report"] = pipeline.StepSucceeded, pipeline.StepRunning, pipeline.StepRunning
	assertSteps(t, run, want)
	rep, _ := r.store.Get(r.ctx, run.Steps["report"].JobID)
	if rep.Spec.Class != jobs.ClassBurst || rep.Queue == string(queues.QueueCore) {
		t.Fatalf("post-processing step placed as %s in %s, want burst work", rep.Spec.Class, rep.Queue)
	}
	tr, _ := r.store.Get(r.ctx, run.Steps["train"].JobID)
	if tr.Spec.Class != jobs.ClassCore {
		t.Fatalf("a pipeline step defaults to core, got %s", tr.Spec.Class)
	}

	r.finish(tr.ID, jobs.StateSucceeded)
	r.finish(rep.ID, jobs.StateSucceeded)
	r.tick(p, fire.Add(4*time.Second))
	run = r.run(run.ID)
	if run.State != pipeline.RunSucceeded || run.FinishedAt.IsZero() || !run.DeadlineMissedAt.IsZero() {
		t.Fatalf("run after all steps succeeded: %+v", run)
	}
	active, _ := r.flows.ActiveRuns(r.ctx)
	if len(active) != 0 {
		t.Fatalf("%d runs still active", len(active))
	}
}

func assertSteps(t *testing.T, run flows.Run, want map[string]pipeline.StepState) {
	t.Helper()
	got := stepStates(run)
	for n, w := range want {
		if got[n] != w {
			t.Fatalf("step %s is %s, want %s (all: %v)", n, got[n], w, got)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
}

func TestFailedStepSkipsItsDependantsAndFailsTheRun(t *testing.T) {
	t.Parallel()
	r := newFlowRig(t)
	def := pipeline.Pipeline{Schedule: "*/10 * * * * *", Steps: map[string]pipeline.Step{
		"a":    {Template: "etl"},
		"b":    {Template: "etl", DependsOn: []string{"a"}},
		"c":    {Template: "etl", DependsOn: []string{"b"}},
		"side": {Template: "etl"},
	}}
	p := r.runner(map[string]pipeline.Pipeline{"p": def})
	now := at("2026-05-01T12:00:00.100Z")
	r.tick(p, now)
	run := r.runs("p")[0]
	r.finish(run.Steps["a"].JobID, jobs.StateFailed)
	r.tick(p, now.Add(time.Second))
	run = r.run(run.ID)
	assertSteps(t, run, map[string]pipeline.StepState{"a": pipeline.StepFailed, "b": pipeline.StepSkipped,
		"c": pipeline.StepSkipped, "side": pipeline.StepRunning})
	if run.State != pipeline.RunRunning {
		t.Fatalf("the run ended while an independent step still ran: %s", run.State)
	}
	r.finish(run.Steps["side"].JobID, jobs.StateSucceeded)
	r.tick(p, now.Add(2*time.Second))
	run = r.run(run.ID)
	if run.State != pipeline.RunFailed || !strings.Contains(run.Reason, "step a failed") {
		t.Fatalf("run %s reason %q, want failed because of step a", run.State, run.Reason)
	}
}

func TestTwoRunnersFireEachTimeOnce(t *testing.T) {
	t.Parallel()
	r := newFlowRig(t)
	def := pipeline.Pipeline{Schedule: "*/5 * * * * *", Overlap: pipeline.OverlapAllow,
		Steps: map[string]pipeline.Step{"only": {Template: "etl"}}}
	a := r.runner(map[string]pipeline.Pipeline{"p": def})
	b := r.runner(map[string]pipeline.Pipeline{"p": def})
	start := at("2026-05-01T12:00:00Z")
	// Both tick at every 250 ms over 30 s, concurrently: six scheduled times.
	for now := start.Add(100 * time.Millisecond); now.Before(start.Add(30 * time.Second)); now = now.Add(250 * time.Millisecond) {
		var wg sync.WaitGroup
		for _, p := range []*controller.Pipelines{a, b} {
			wg.Add(1)
			go func() { defer wg.Done(); _ = p.Tick(r.ctx, now) }()
		}
		wg.Wait()
	}
	runs := r.runs("p")
	seen := map[time.Time]int{}
	for _, run := range runs {
		seen[run.Scheduled]++
	}
	if len(runs) != 6 || len(seen) != 6 {
		t.Fatalf("%d runs for %d distinct times, want 6 and 6: %v", len(runs), len(seen), seen)
	}
	jobsSeen := map[string]bool{}
	for _, run := range runs {
		id := run.Steps["only"].JobID
		if id == "" || jobsSeen[id] {
			t.Fatalf("run %s has step job %q (duplicate or missing)", run.ID, id)
		}
		jobsSeen[id] = true
	}
}

func TestCatchUpPolicies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy   pipeline.CatchUp
		wantRuns int
	}{{pipeline.CatchUpSkip, 1}, {pipeline.CatchUpLatest, 2}} {
		t.Run(string(tc.policy), func(t *testing.T) {
			t.Parallel()
			r := newFlowRig(t)
			def := nightly()
			def.CatchUp = tc.policy
			p := r.runner(map[string]pipeline.Pipeline{"nightly": def})
			r.tick(p, at("2026-03-10T02:00:01Z"))
			first := r.runs("nightly")[0]
			// The first run is cancelled so that forbid does not skip the
			// catch-up run: this test is about catch-up alone.
			if err := controller.CancelRun(r.ctx, r.flows, r.store, nil, first.ID, "test: make room"); err != nil {
				t.Fatal(err)
			}
			// The controller is down over two scheduled times and comes back at 05:00 two days later.
			back := at("2026-03-12T05:00:00Z")
			r.tick(p, back)
			r.tick(p, back.Add(time.Second))
			runs := r.runs("nightly")
			if len(runs) != tc.wantRuns {
				t.Fatalf("%d runs, want %d", len(runs), tc.wantRuns)
			}
			handled, _ := r.flows.HandledUntil(r.ctx, "nightly")
			if !handled.Equal(at("2026-03-12T02:00:00Z")) {
				t.Fatalf("handled until %s, want the latest missed time", handled)
			}
			if tc.policy == pipeline.CatchUpLatest {
				late := runs[0]
				if !late.Scheduled.Equal(at("2026-03-12T02:00:00Z")) || late.Trigger != flows.TriggerCatchUp {
					t.Fatalf("catch-up run: scheduled %s trigger %s", late.Scheduled, late.Trigger)
				}
				// Started at 05:00, its 1h deadline (03:00) is already past.
				if late.DeadlineMissedAt.IsZero() && r.run(late.ID).DeadlineMissedAt.IsZero() {
					t.Fatal("a catch-up run past its deadline is not marked")
				}
			}
			// The next regular time fires as usual.
			r.tick(p, at("2026-03-13T02:00:02Z"))
			if n := len(r.runs("nightly")); n != tc.wantRuns+1 {
				t.Fatalf("after the next time: %d runs, want %d", n, tc.wantRuns+1)
			}
		})
	}
}

func TestNewPipelinesNeedsStoreSubmitterAndCatalog(t *testing.T) {
	if _, err := controller.NewPipelines(controller.PipelinesOptions{}); err == nil {
		t.Fatal("a runner without a store was accepted")
	}
}

func TestOverlapPolicies(t *testing.T) {
	t.Parallel()
	for _, policy := range []pipeline.Overlap{pipeline.OverlapForbid, pipeline.OverlapAllow, pipeline.OverlapReplace} {
		t.Run(string(policy), func(t *testing.T) {
			t.Parallel()
			r := newFlowRig(t)
			def := pipeline.Pipeline{Schedule: "*/10 * * * * *", Overlap: policy,
				Steps: map[string]pipeline.Step{"long": {Template: "etl"}}}
			p := r.runner(map[string]pipeline.Pipeline{"p": def})
			t0 := at("2026-05-01T12:00:00.050Z")
			r.tick(p, t0)
			first := r.runs("p")[0]
			firstJob := first.Steps["long"].JobID
			r.tick(p, t0.Add(10*time.Second)) // the first run is still going
			runs := r.runs("p")
			if len(runs) != 2 {
				t.Fatalf("%d run records, want 2 (the second time is recorded whatever the policy)", len(runs))
			}
			second, first := runs[0], r.run(first.ID)
			fj, _ := r.store.Get(r.ctx, firstJob)
			switch policy {
			case pipeline.OverlapForbid:
				if second.State != pipeline.RunSkipped || !strings.Contains(second.Reason, first.ID) || first.State != pipeline.RunRunning {
					t.Fatalf("forbid: second %s (%q), first %s", second.State, second.Reason, first.State)
				}
				if _, err := p.Trigger(r.ctx, "p", t0.Add(11*time.Second)); err == nil || !strings.Contains(err.Error(), "overlap is forbid") {
					t.Fatalf("manual trigger under forbid with an active run: %v", err)
				}
			case pipeline.OverlapAllow:
				if second.State != pipeline.RunRunning || first.State != pipeline.RunRunning {
					t.Fatalf("allow: second %s, first %s", second.State, first.State)
				}
			case pipeline.OverlapReplace:
				if second.State != pipeline.RunRunning || first.State != pipeline.RunCancelled || fj.State != jobs.StateCancelled {
					t.Fatalf("replace: second %s, first %s, first's job %s", second.State, first.State, fj.State)
				}
				if first.Steps["long"].State != pipeline.StepCancelled {
					t.Fatalf("replaced run's running step is %s", first.Steps["long"].State)
				}
			}
		})
	}
}

func TestManualTriggerAndDeadlineMiss(t *testing.T) {
	t.Parallel()
	r := newFlowRig(t)
	def := pipeline.Pipeline{Schedule: "0 0 1 1 *", Deadline: "30m", Steps: map[string]pipeline.Step{"s": {Template: "etl"}}}
	p := r.runner(map[string]pipeline.Pipeline{"yearly": def})
	now := at("2026-06-01T10:00:00Z")
	run, err := p.Trigger(r.ctx, "yearly", now)
	if err != nil {
		t.Fatal(err)
	}
	if run.Trigger != flows.TriggerManual || !run.Deadline.Equal(now.Add(30*time.Minute)) {
		t.Fatalf("manual run: %+v", run)
	}
	if _, err := p.Trigger(r.ctx, "nope", now); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("unknown pipeline: %v", err)
	}
	r.tick(p, now.Add(29*time.Minute))
	if !r.run(run.ID).DeadlineMissedAt.IsZero() {
		t.Fatal("marked missed before the deadline")
	}
	r.tick(p, now.Add(31*time.Minute))
	missed := r.run(run.ID).DeadlineMissedAt
	if missed.IsZero() {
		t.Fatal("a run past its deadline is not marked")
	}
	first, err := r.flows.MarkDeadlineMissed(r.ctx, run.ID)
	if err != nil || first {
		t.Fatalf("the miss was recorded twice (first=%v, err=%v)", first, err)
	}
}
