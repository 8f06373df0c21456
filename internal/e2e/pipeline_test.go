package e2e

import (
	"context"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/pipeline"
	"github.com/ballastdev/ballast/queues/flows"
)

// markStep is a hy-mark step recording into record after deps.
func markStep(record string, deps ...string) pipeline.Step {
	return pipeline.Step{Template: "hy-mark", Params: map[string]any{"record": record, "seconds": 0.1}, DependsOn: deps}
}

// TestPipelineFiresOnTimeInOrderUnderTwoControllers: two controllers share
// a namespace and a pipeline firing every 3 s with a diamond DAG. Halfway,
// the leader is stopped. Every scheduled time in the window gets exactly
// one run, each run starts within the fire grace of its time, and every
// run's steps ran in dependency order, each exactly once.
func TestPipelineFiresOnTimeInOrderUnderTwoControllers(t *testing.T) {
	t.Parallel()
	r := newHybridRig(t, config.Dev().Pools, 0.7, 0.4)
	record := filepath.Join(r.dir, "steps.record")
	// Overlap allowed: the test is of firing on time across a failover,
	// and on a loaded machine a run of three 0.1 s stages can outlast the
	// 3 s period, which "forbid" would turn into a skipped run.
	r.setPipelines(map[string]pipeline.Pipeline{"every3s": {Schedule: "*/3 * * * * *", Overlap: pipeline.OverlapAllow, Steps: map[string]pipeline.Step{
		"extract":  markStep(record),
		"clean":    markStep(record, "extract"),
		"features": markStep(record, "extract"),
		"publish":  markStep(record, "clean", "features"),
	}}}, time.Second)
	r.startFixedWorker("fixed-1", 4)
	a, _ := r.startFlowController("ctl-a")
	b, _ := r.startFlowController("ctl-b")
	start := time.Now()
	time.Sleep(7 * time.Second)
	leader, other := a, b
	if b.Leader() {
		leader, other = b, a
	}
	leader.Stop()
	testenv.Eventually(t, 3*time.Second, "the standby leads", other.Leader)
	time.Sleep(7 * time.Second)
	end := time.Now()
	other.Stop() // nothing fires after end
	// Let runs in flight end: the standby is gone, so advance them by hand.
	// Up to five runs may be in flight, each a chain of three steps that
	// ctl-c starts one after another once it leads; under the race
	// detector, with the rest of the package running beside it on two
	// cores, that once took longer than 15 s. Nothing here is timed: the
	// bound only keeps a broken run from hanging the test.
	r.startFlowController("ctl-c")
	testenv.Eventually(t, 60*time.Second, "every run ended", func() bool {
		active, err := flows.New(r.store).ActiveRuns(context.Background())
		return err == nil && len(active) == 0
	})

	runs := r.runs("every3s")
	byTime := map[time.Time]flows.Run{}
	for _, run := range runs {
		if prev, dup := byTime[run.Scheduled]; dup {
			t.Fatalf("two runs for %s: %s and %s", run.Scheduled, prev.ID, run.ID)
		}
		byTime[run.Scheduled] = run
	}
	// Every multiple of 3 s inside the window fired (the end is left out:
	// the last controller may have stopped just as it came).
	for tm := start.Truncate(3 * time.Second).Add(3 * time.Second); tm.Before(end.Add(-500 * time.Millisecond)); tm = tm.Add(3 * time.Second) {
		if _, ok := byTime[tm.UTC()]; !ok {
			t.Fatalf("no run for %s (runs: %d)", tm.UTC(), len(runs))
		}
	}
	marks := readMarks(t, record)
	var lags []time.Duration
	for _, run := range runs {
		if run.State != pipeline.RunSucceeded {
			t.Fatalf("run %s (%s) ended %s: %s", run.ID, run.Scheduled, run.State, run.Reason)
		}
		span := func(step string) span {
			s, ok := marks[run.Steps[step].JobID]
			if !ok {
				t.Fatalf("run %s step %s (job %s) left no mark", run.ID, step, run.Steps[step].JobID)
			}
			return s
		}
		ext, cl, fe, pub := span("extract"), span("clean"), span("features"), span("publish")
		if cl.start.Before(ext.end) || fe.start.Before(ext.end) || pub.start.Before(cl.end) || pub.start.Before(fe.end) {
			t.Fatalf("run %s: steps out of order: extract %v, clean %v, features %v, publish %v", run.ID, ext, cl, fe, pub)
		}
		lags = append(lags, r.job(run.Steps["extract"].JobID).CreatedAt.Sub(run.Scheduled))
	}
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	if max := lags[len(lags)-1]; max > time.Second {
		t.Fatalf("a run started %s after its time, beyond the 1 s fire grace", max)
	}
	t.Logf("%d runs, one per scheduled time; scheduled time -> first step enqueued: p50 %s, max %s",
		len(runs), lags[len(lags)/2].Round(time.Millisecond), lags[len(lags)-1].Round(time.Millisecond))
}

// TestPipelineCatchUpAfterControllerSIGKILL: a `ballast controller` process
// fires a pipeline every 6 s and is SIGKILLed right after a run; a new one
// starts after the next scheduled time has passed by more than the grace.
// With catch_up skip that time never runs and a pipeline.missed event says
// so; with latest it runs once, marked catch-up. Either way the following
// time fires on schedule and no time runs twice.
func TestPipelineCatchUpAfterControllerSIGKILL(t *testing.T) {
	t.Parallel()
	for _, policy := range []pipeline.CatchUp{pipeline.CatchUpSkip, pipeline.CatchUpLatest} {
		t.Run(string(policy), func(t *testing.T) {
			t.Parallel()
			r := newHybridRig(t, config.Dev().Pools, 0.7, 0.4)
			record := filepath.Join(r.dir, "steps.record")
			r.setPipelines(map[string]pipeline.Pipeline{"every6s": {Schedule: "*/6 * * * * *", CatchUp: policy,
				Steps: map[string]pipeline.Step{"only": markStep(record)}}}, time.Second)
			r.startFixedWorker("fixed-1", 2)
			seen := testenv.CollectEvents(t, r.nc, r.subj.Pipeline("every6s"))

			first := r.startBallast("ctl-1", "controller", "--config", r.cfgPath)
			testenv.Eventually(t, 20*time.Second, "the first run", func() bool { return len(r.runs("every6s")) > 0 })
			if err := first.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-first.done
			t0 := r.runs("every6s")[0].Scheduled
			if time.Since(t0) > 4*time.Second {
				t.Fatalf("killed %s after the first run's time; the next time may not be missed as planned", time.Since(t0))
			}
			missed, next := t0.Add(6*time.Second), t0.Add(12*time.Second)
			// Restart after the next time is past the 1 s grace, leaving the
			// new controller time to take the lease before the one after.
			sleepUntil(missed.Add(1500 * time.Millisecond))
			restarted := time.Now()
			r.startBallast("ctl-2", "controller", "--config", r.cfgPath)
			testenv.Eventually(t, 20*time.Second, "the run after the restart", func() bool {
				runs := r.runs("every6s")
				return runs[len(runs)-1].Scheduled.Equal(next)
			})
			runs := r.runs("every6s")
			var times []time.Time
			for _, run := range runs {
				times = append(times, run.Scheduled)
			}
			switch policy {
			case pipeline.CatchUpSkip:
				if len(runs) != 2 || !times[0].Equal(t0) || !times[1].Equal(next) {
					t.Fatalf("skip: runs at %v, want %s and %s only", times, t0, next)
				}
				testenv.Eventually(t, 5*time.Second, "a pipeline.missed event for the skipped time", func() bool {
					return seen.Any(func(e events.Event) bool {
						return e.Type == events.TypePipelineMissed && e.Data["scheduled"] == missed.UTC().Format(time.RFC3339Nano)
					})
				})
			case pipeline.CatchUpLatest:
				if len(runs) != 3 || !times[1].Equal(missed) || runs[1].Trigger != flows.TriggerCatchUp || runs[2].Trigger != flows.TriggerSchedule {
					t.Fatalf("latest: runs at %v (triggers %s, %s), want %s caught up once", times, runs[1].Trigger, runs[len(runs)-1].Trigger, missed)
				}
				t.Logf("the missed time ran %s after the restart", runs[1].CreatedAt.Sub(restarted).Round(time.Millisecond))
			}
			if handled, _ := flows.New(r.store).HandledUntil(context.Background(), "every6s"); handled.Before(next) {
				t.Fatalf("handled until %s, want at least %s", handled, next)
			}
		})
	}
}
