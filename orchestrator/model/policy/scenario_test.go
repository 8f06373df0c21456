package policy

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Multi-tick behaviour, run through the world harness.

func TestScenarioCoreReclaimsAndBurstMovesToSpot(t *testing.T) {
	burst := jobs.ClassBurst
	sp := elasticPool("sp", PoolSpot, "eu", 0.3)
	sp.SlotsPerWorker = 2
	f1 := worker("f1", "fx", 2, 0)
	b1 := running("b1", burst, f1, ago(10*time.Minute))
	b1.LastCheckpointAt = ago(time.Minute)
	b2 := running("b2", burst, f1, ago(5*time.Minute))
	w := newWorld(t, snap([]Pool{fixedPool("fx", "eu"), sp}, []Worker{f1}, b1, b2), time.Minute)

	w.submit(queued("c1", jobs.ClassCore, QueueCore, t0), 0)
	got := w.run(4)
	want := []string{"reclaim(b1,f1) scale_up(sp,1)", "", "", ""}
	if !slices.Equal(got, want) {
		t.Fatalf("plans\n got %q\nwant %q", got, want)
	}
	if c1 := w.job("c1"); !c1.running() || c1.Worker != "f1" {
		t.Errorf("c1 = %+v, want running on f1", *c1)
	}
	if b := w.job("b1"); !b.running() || w.pool(b.Pool).Kind != PoolSpot || b.LastCheckpointAt != t0 {
		t.Errorf("b1 = %+v, want resumed on spot from the checkpoint taken at reclaim", *b)
	}
}

func TestScenarioCoolDownMigratesDrainsReleases(t *testing.T) {
	burst := jobs.ClassBurst
	od := elasticPool("od", PoolOnDemand, "eu", 1.0)
	o1 := worker("o1", "od", 4, 0)
	m1 := running("m1", burst, o1, ago(time.Minute))
	m2 := running("m2", burst, o1, ago(time.Minute))
	n1 := running("n1", burst, o1, ago(time.Minute))
	n1.Checkpointable = false
	w := newWorld(t, snap([]Pool{fixedPool("fx", "eu"), od}, []Worker{worker("f1", "fx", 10, 0), o1}, m1, m2, n1), time.Minute)
	w.runtime["n1"] = 3 * time.Minute

	got := w.run(5)
	want := []string{"migrate(m1,o1) migrate(m2,o1) drain(o1)", "", "", "release(o1)", ""}
	if !slices.Equal(got, want) {
		t.Fatalf("plans\n got %q\nwant %q", got, want)
	}
	for _, id := range []string{"m1", "m2"} {
		if j := w.job(id); !j.running() || j.Worker != "f1" {
			t.Errorf("%s = %+v, want running on f1", id, *j)
		}
	}
	if w.worker("o1") != nil {
		t.Error("o1 is still there")
	}
}

func TestScenarioSpotFallsBackToOnDemand(t *testing.T) {
	sp := elasticPool("sp", PoolSpot, "eu", 0.3)
	od := elasticPool("od", PoolOnDemand, "eu", 1.0)
	var js []Job
	for i := range 4 {
		js = append(js, queued(fmt.Sprintf("q%d", i), jobs.ClassBurst, QueueBurst, t0))
	}
	s := snap([]Pool{fixedPool("fx", "eu"), sp, od}, []Worker{worker("f1", "fx", 2, 2)}, js...)
	s.Config.SpotFallbackAfter = 5 * time.Minute
	w := newWorld(t, s, time.Minute)
	w.dry["sp"] = true

	got := w.run(8)
	want := []string{"scale_up(sp,1)", "", "", "", "", "scale_up(od,1)", "", ""}
	if !slices.Equal(got, want) {
		t.Fatalf("plans\n got %q\nwant %q", got, want)
	}
	for _, j := range w.s.Jobs {
		if !j.running() || j.Pool != "od" {
			t.Errorf("%s = %+v, want running on od", j.ID, j)
		}
	}
}

func TestScenarioHourlyReleaseLandsBeforeTheHourEnds(t *testing.T) {
	oh := elasticPool("oh", PoolOnDemand, "eu", 1.0)
	oh.Billing = BillingPerHour
	idle := worker("w", "oh", 4, 0)
	idle.StartedAt, idle.IdleSince = ago(40*time.Minute), ago(40*time.Minute)
	w := newWorld(t, snap([]Pool{fixedPool("fx", "eu"), oh}, []Worker{idle}), 30*time.Second)

	for w.worker("w") != nil {
		if w.now.After(t0.Add(time.Hour)) {
			t.Fatal("never released")
		}
		w.step()
	}
	// The paid hour ends at t0+20m; with a 2m margin the release is due at t0+18m.
	if at := w.now.Add(-w.tick); !at.Equal(t0.Add(18 * time.Minute)) {
		t.Errorf("released at +%s, want +18m", at.Sub(t0))
	}
}

// TestScenarioNoThrash wobbles fixed utilization around the watermarks with
// short core jobs and a stream of burst work: a job may move once (lent, or
// migrated back to fixed), never back and forth, because no core job ever
// waits for a slot here.
func TestScenarioNoThrash(t *testing.T) {
	burst := jobs.ClassBurst
	sp := elasticPool("sp", PoolSpot, "eu", 0.3)
	ws := []Worker{worker("f1", "fx", 10, 2), worker("s1", "sp", 4, 0), worker("s2", "sp", 4, 0)}
	var js []Job
	for i := range 8 {
		js = append(js, running(fmt.Sprintf("m%d", i), burst, ws[1+i%2], ago(time.Minute)))
	}
	w := newWorld(t, snap([]Pool{fixedPool("fx", "eu"), sp}, ws, js...), time.Minute)
	for i := range 8 {
		w.runtime[fmt.Sprintf("m%d", i)] = time.Duration(3+i) * time.Minute
	}
	for i := range 40 {
		if i%3 == 0 {
			w.submit(queued(fmt.Sprintf("c%02d", i), jobs.ClassCore, QueueCore, w.now), 2*time.Minute)
		}
		if i%2 == 0 {
			w.submit(queued(fmt.Sprintf("q%02d", i), burst, QueueBurst, w.now), 5*time.Minute)
		}
		w.step()
	}
	moved := w.moves()
	for id, kinds := range moved {
		if len(kinds) > 1 {
			t.Errorf("%s moved %d times: %v", id, len(kinds), kinds)
		}
	}
	if len(moved) == 0 {
		t.Error("nothing moved to fixed quota at all")
	}
	if t.Failed() {
		for i, p := range w.plans {
			t.Logf("tick %d: %s", i, summary(p))
		}
	}
}
