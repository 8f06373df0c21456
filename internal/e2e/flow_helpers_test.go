package e2e

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/pipeline"
	"github.com/ballastdev/ballast/queues/flows"
)

// setPipelines rewrites the rig's config with defs and a fire grace, for
// in-process controllers and `ballast controller` children alike.
func (r *hybridRig) setPipelines(defs map[string]pipeline.Pipeline, grace time.Duration) {
	r.t.Helper()
	r.cfg.Pipelines = defs
	r.cfg.Controller.FireGrace = jobs.Duration(grace)
	r.saveConfig()
}

// startFlowController starts an in-process controller running the rig's
// pipelines and sweeps, woken by job-end events as in `ballast controller`.
// Burst work goes to loan, so the fixed workers run it.
func (r *hybridRig) startFlowController(id string) (*controller.Controller, *controller.Sweeps) {
	r.t.Helper()
	cat, err := r.cfg.Catalog()
	if err != nil {
		r.t.Fatal(err)
	}
	sub := &controller.Submitter{Catalog: cat, Store: r.store, Router: controller.Router{}, Events: r.pub, Logger: quietLogger()}
	pl, err := controller.NewPipelines(controller.PipelinesOptions{Runs: flows.New(r.store), Jobs: r.store, Submitter: sub, Catalog: cat,
		Pipelines: r.cfg.Pipelines, Grace: r.cfg.Controller.FireGrace.Std(), Events: r.pub, Logger: quietLogger()})
	if err != nil {
		r.t.Fatal(err)
	}
	sw, err := controller.NewSweeps(controller.SweepsOptions{Sweeps: flows.New(r.store), Jobs: r.store, Submitter: sub, Catalog: cat, Events: r.pub, Logger: quietLogger()})
	if err != nil {
		r.t.Fatal(err)
	}
	ctl, err := controller.New(r.store, controller.Options{ID: id, Tick: hyTick, WorkerTTL: hyWorkerTTL, LeaderTTL: hyLeaderTTL,
		Events: r.pub, Logger: quietLogger(), Pipelines: pl, Sweeps: sw})
	if err != nil {
		r.t.Fatal(err)
	}
	if err := ctl.Start(context.Background()); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(ctl.Stop)
	wake, err := eventbus.OnJobEnd(r.nc, r.subj, func(events.Event) { ctl.PokeFlows() })
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { _ = wake.Unsubscribe() })
	return ctl, sw
}

// runs returns a pipeline's runs, oldest scheduled first.
func (r *hybridRig) runs(name string) []flows.Run {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	runs, err := flows.New(r.store).ListRuns(ctx, name, 1000)
	if err != nil {
		r.t.Fatalf("ListRuns: %v", err)
	}
	for i, j := 0, len(runs)-1; i < j; i, j = i+1, j-1 {
		runs[i], runs[j] = runs[j], runs[i]
	}
	return runs
}

// span is when a hy-mark job ran.
type span struct{ start, end time.Time }

// readMarks reads a hy-mark record file: job ID to its span.
func readMarks(t *testing.T, path string) map[string]span {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("marks: %v", err)
	}
	defer f.Close()
	out := map[string]span{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 3 {
			t.Fatalf("bad mark line %q", sc.Text())
		}
		s, _ := strconv.ParseInt(fs[1], 10, 64)
		e, _ := strconv.ParseInt(fs[2], 10, 64)
		if _, dup := out[fs[0]]; dup {
			t.Fatalf("job %s ran twice", fs[0])
		}
		out[fs[0]] = span{time.Unix(0, s), time.Unix(0, e)}
	}
	return out
}

// sleepUntil sleeps until t.
func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }
