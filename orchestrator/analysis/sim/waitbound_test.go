package sim

import (
	"reflect"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// backlogTrace is a day of hourly bursts on a small quota: 6 core jobs of
// 50 minutes and 10 burst jobs of 30 minutes each hour. Two fixed slots
// leave core work queueing for longer and longer; elastic capacity takes
// three minutes to boot, so burst jobs wait about that.
func backlogTrace() trace.Trace {
	var js []trace.Job
	for h := 0; h < 24; h++ {
		at := time.Duration(h) * time.Hour
		for range 6 {
			js = append(js, coreJob(at, 50*time.Minute))
		}
		for i := range 10 {
			js = append(js, burstJob(at+time.Duration(i)*time.Minute, 30*time.Minute, i%2 == 0))
		}
	}
	return mkTrace(js...)
}

func TestStopOverP95StopsOnlyWhenTheVerdictIsSure(t *testing.T) {
	tr := backlogTrace()
	base := Options{Pools: []policy.Pool{quota(1), onDemand(3, 1)}, FixedSlots: 2, Tick: 10 * time.Second}
	full := mustRun(t, tr, base)
	if full.Stopped != "" {
		t.Fatalf("a run without a bound stopped: %s", full.Stopped)
	}
	if full.CoreWait.P95 < 2*time.Hour {
		t.Fatalf("the case needs a core backlog; core p95 is only %v", full.CoreWait.P95)
	}
	stoppedOnce, ranOnce := false, false
	for _, bound := range []time.Duration{time.Minute, 3 * time.Minute, 10 * time.Minute, time.Hour, 5 * time.Hour,
		full.CoreWait.P95 - time.Second, full.CoreWait.P95, 100 * time.Hour} {
		o := base
		o.StopOverP95 = bound
		r := mustRun(t, tr, o)
		worst := max(full.CoreWait.P95, full.ElasticWait.P95)
		if r.Stopped != "" {
			stoppedOnce = true
			// Sound: the whole run does miss the bound.
			if worst <= bound {
				t.Errorf("bound %v: stopped (%s) though the whole run's p95 waits are %v and %v",
					bound, r.Stopped, full.CoreWait.P95, full.ElasticWait.P95)
			}
			if r.Unfinished == 0 || r.Decisions >= full.Decisions {
				t.Errorf("bound %v: stopped, yet %d unfinished and %d decisions (whole run %d)", bound, r.Unfinished, r.Decisions, full.Decisions)
			}
			continue
		}
		ranOnce = true
		// A run that is not stopped is the very same run.
		if !reflect.DeepEqual(r, full) {
			t.Errorf("bound %v: not stopped, but the result differs from the unbounded run:\n%+v\n%+v", bound, r, full)
		}
	}
	if !stoppedOnce || !ranOnce {
		t.Fatalf("the bounds tried should both stop (%v) and not stop (%v) the run", stoppedOnce, ranOnce)
	}
	// Complete here: the core backlog keeps growing, so a bound just under
	// the whole run's core p95 is seen to be missed while work remains.
	o := base
	o.StopOverP95 = full.CoreWait.P95 - time.Nanosecond
	if r := mustRun(t, tr, o); r.Stopped == "" {
		t.Errorf("bound %v just under the core p95 did not stop the run", o.StopOverP95)
	} else if r.Unfinished+r.Jobs != len(tr.Jobs) {
		t.Errorf("stopped: %d finished and %d unfinished of %d jobs; jobs that never arrived are unfinished too", r.Jobs, r.Unfinished, len(tr.Jobs))
	}
}

// A trace of one class has no waits of the other to miss the bound.
func TestStopOverP95WithOneClassOnly(t *testing.T) {
	var js []trace.Job
	for i := range 3 {
		js = append(js, coreJob(time.Duration(i)*time.Minute, time.Hour))
	}
	o := Options{Pools: []policy.Pool{quota(1), onDemand(3, 1)}, FixedSlots: 4, Tick: 10 * time.Second, StopOverP95: 10 * time.Minute}
	if r := mustRun(t, mkTrace(js...), o); r.Stopped != "" || r.Jobs != 3 {
		t.Fatalf("a core-only trace on ample quota: %d jobs done, stopped %q", r.Jobs, r.Stopped)
	}
}

func TestStopOverP95MustNotBeNegative(t *testing.T) {
	_, err := Run(backlogTrace(), Options{Pools: []policy.Pool{quota(1), onDemand(3, 1)}, FixedSlots: 2, StopOverP95: -time.Second})
	if err == nil {
		t.Fatal("a negative bound was accepted")
	}
}
