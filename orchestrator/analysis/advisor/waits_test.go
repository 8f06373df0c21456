package advisor

import (
	"maps"
	"strings"
	"testing"
	"time"
)

// burstOfWaits adds 20 jobs 30 s apart from 10:20, waiting 1..20 min,
// every fourth one core. The background waits at 10:15 and 10:45 stay out
// of the worst window: [10:15, 10:25) holds 1 + 10 jobs, p95 10 min.
func burstOfWaits() Window {
	w := balanced()
	for k := range 20 {
		class := "burst"
		if k%4 == 0 {
			class = "core"
		}
		w.ElasticWaits = append(w.ElasticWaits, Wait{At: at(10, 20, 30*k), Class: class, Wait: time.Duration(k+1) * time.Minute})
	}
	return w
}

func TestLongElasticWaitsWarn(t *testing.T) {
	r := only(t, Advise(burstOfWaits()), KindElasticWaits)
	// 20 waits of 1..20 min: nearest-rank p95 is the 19th, 19 min.
	want := WaitEvidence{
		From: at(10, 20, 0), Until: at(10, 30, 0), P95: 19 * time.Minute, Jobs: 20,
		ByClass: map[string]int{"burst": 15, "core": 5}, Threshold: 10 * time.Minute,
	}
	ev := r.Evidence.Waits
	if ev == nil {
		t.Fatalf("no wait evidence in %+v", r)
	}
	if ev.From != want.From || ev.Until != want.Until || ev.P95 != want.P95 || ev.Jobs != want.Jobs ||
		ev.Threshold != want.Threshold || !maps.Equal(ev.ByClass, want.ByClass) {
		t.Errorf("evidence %+v, want %+v", *ev, want)
	}
	if r.Severity != SeverityWarn {
		t.Errorf("severity %q, want warn", r.Severity)
	}
	for _, s := range []string{"19m0s", "20 jobs", "raise pool limits", "lower the high watermark", "2025-03-03T10:20:00Z"} {
		if !strings.Contains(r.Action, s) {
			t.Errorf("action %q does not mention %q", r.Action, s)
		}
	}
}

func TestWaitOptions(t *testing.T) {
	w := burstOfWaits()
	for _, tc := range []struct {
		name string
		o    Options
		fire bool
	}{
		{"p95 equal to threshold is not over it", Options{MaxWaitP95: 19 * time.Minute}, false},
		{"threshold just under the p95", Options{MaxWaitP95: 19*time.Minute - time.Second}, true},
		{"threshold over the p95", Options{MaxWaitP95: 30 * time.Minute}, false},
	} {
		got := len(ofKind(tc.o.Advise(w), KindElasticWaits)) == 1
		if got != tc.fire {
			t.Errorf("%s: fired %v, want %v", tc.name, got, tc.fire)
		}
	}
	// A 5-minute window: from 10:25 it holds jobs 11..20, waits 11..20 min,
	// p95 the 10th of 10, 20 min; the earlier windows read at most 19.
	r := ofKind(Options{WaitWindow: 5 * time.Minute}.Advise(w), KindElasticWaits)
	if len(r) != 1 {
		t.Fatalf("5-minute window: got %v", kinds(r))
	}
	if ev := r[0].Evidence.Waits; ev.From != at(10, 25, 0) || ev.P95 != 20*time.Minute || ev.Jobs != 10 {
		t.Errorf("5-minute window evidence %+v, want from 10:25, p95 20m, 10 jobs", *ev)
	}
}

func TestWaitsOutsideTheWindowAreIgnored(t *testing.T) {
	w := burstOfWaits()
	w.From = at(11, 0, 0) // the burst is now before the window
	if rs := ofKind(Advise(w), KindElasticWaits); len(rs) != 0 {
		t.Errorf("waits before From counted: %+v", rs[0].Evidence.Waits)
	}
}
