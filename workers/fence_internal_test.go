package workers

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// TestFenceTimingStopsThenKillsBeforeTheTTL: with time passed in, the fence
// begins at its share of the TTL after the last renewal, the grace left to
// a stopping job shrinks to the kill time half way to the TTL, and the kill
// comes before the TTL, however the TTL and share are set.
func TestFenceTimingStopsThenKillsBeforeTheTTL(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	f := fenceTiming{ttl: 4 * time.Second, at: 0.75}
	cases := []struct {
		since time.Duration
		want  fenceState
	}{
		{0, fenceState{}},
		{2999 * time.Millisecond, fenceState{}},
		{3 * time.Second, fenceState{fenced: true, grace: 500 * time.Millisecond}},
		{3200 * time.Millisecond, fenceState{fenced: true, grace: 300 * time.Millisecond}},
		{3500 * time.Millisecond, fenceState{fenced: true, kill: true}},
		{time.Hour, fenceState{fenced: true, kill: true}},
		// A renewal stamped after now (a clock stepped back) is no silence.
		{-time.Second, fenceState{}},
	}
	for _, c := range cases {
		if got := f.state(t0, t0.Add(c.since)); got != c.want {
			t.Errorf("%s after the renewal: %+v, want %+v", c.since, got, c.want)
		}
	}
	for _, ttl := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, time.Minute} {
		for _, at := range []float64{0.1, 0.5, 2.0 / 3, 0.75, MaxSelfFence} {
			f := fenceTiming{ttl: ttl, at: at}
			if !(f.fenceAfter() < f.killAfter() && f.killAfter() < ttl) {
				t.Errorf("ttl %s share %g: fence %s, kill %s: want fence < kill < ttl", ttl, at, f.fenceAfter(), f.killAfter())
			}
			if e := f.checkEvery(); e <= 0 || e > 100*time.Millisecond || e > f.killAfter()-f.fenceAfter() {
				t.Errorf("ttl %s share %g: looks every %s, more than the %s between fence and kill", ttl, at, e, f.killAfter()-f.fenceAfter())
			}
		}
	}
}

// TestFenceTimingOff: a share of 0 or less, or no TTL, never fences.
func TestFenceTimingOff(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for _, f := range []fenceTiming{{ttl: 4 * time.Second, at: -1}, {ttl: 4 * time.Second}, {at: 0.75}} {
		if got := f.state(t0, t0.Add(time.Hour)); got != (fenceState{}) {
			t.Errorf("%+v fenced: %+v", f, got)
		}
	}
}

// TestCheckFenceBeginsAndLiftsOnInjectedTime: the worker's own state, on
// its injected clock: a fence begins once, stops every attempt with the
// grace left, is counted, and lifts at the next renewal, adding its length.
func TestCheckFenceBeginsAndLiftsOnInjectedTime(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	now := t0
	opts := Options{Slots: 1, WorkerTTL: 4 * time.Second, Now: func() time.Time { return now }}.WithDefaults()
	w, err := New(nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	w.fence.renewed = t0
	r := newRunning(jobs.Job{ID: "j", Attempt: 1, Spec: jobs.Spec{Grace: jobs.Duration(30 * time.Second)}}, "w", w.opts.Now)
	w.jobs["j:1"] = r

	now = t0.Add(2 * time.Second)
	w.checkFence()
	if w.selfFenced() || r.reason() != "" {
		t.Fatalf("fenced 2s after a renewal with a 4s TTL")
	}
	now = t0.Add(3100 * time.Millisecond)
	w.checkFence()
	if !w.selfFenced() || r.reason() != stopFenced {
		t.Fatalf("not fenced at 3.1s: fenced %v, reason %q", w.selfFenced(), r.reason())
	}
	if g := r.graceFor(stopFenced); g != 400*time.Millisecond {
		t.Errorf("grace %s, want the 400ms left before the kill at 3.5s", g)
	}
	now = t0.Add(3300 * time.Millisecond)
	w.checkFence() // still the same fence
	if n, _ := w.fenceReport(now); n != 1 {
		t.Errorf("%d fences counted, want 1", n)
	}
	now = t0.Add(5 * time.Second)
	w.renewedAt(t0.Add(4900 * time.Millisecond))
	if w.selfFenced() {
		t.Fatal("still fenced after a renewal")
	}
	if n, secs := w.fenceReport(now); n != 1 || secs != 1.9 {
		t.Errorf("report %d fences, %gs; want 1, 1.9s (3.1s to 5s)", n, secs)
	}
	// A heartbeat sent long ago that Redis took only now renews nothing.
	now = t0.Add(10 * time.Second)
	w.renewedAt(t0.Add(6 * time.Second))
	if !w.selfFenced() {
		t.Fatal("a renewal 4s old lifted the fence")
	}
}
