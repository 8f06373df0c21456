package advisor

import (
	"strings"
	"testing"
)

func TestNarrowWatermarkBandWarns(t *testing.T) {
	w := balanced()
	w.High, w.Low = 0.75, 0.60
	r := only(t, Advise(w), KindWatermarkGap)
	ev := r.Evidence.Watermarks
	if r.Severity != SeverityWarn || ev == nil || !near(ev.Gap, 0.15) || !near(ev.MinGap, 0.2) ||
		!near(ev.SuggestedHigh, 0.75) || !near(ev.SuggestedLow, 0.55) {
		t.Fatalf("recommendation %+v, evidence %+v", r, ev)
	}
	for _, s := range []string{"from 15 to at least 20 points", "high 75%", "low 55%"} {
		if !strings.Contains(r.Action, s) {
			t.Errorf("action %q does not mention %q", r.Action, s)
		}
	}
	if !strings.Contains(r.RuleOfThumb, "high 70% and low 40%") {
		t.Errorf("rule of thumb %q", r.RuleOfThumb)
	}
}

func TestHighWatermarkWithoutHeadroomWarns(t *testing.T) {
	w := balanced()
	w.High = 0.95
	r := only(t, Advise(w), KindWatermarkHeadroom)
	ev := r.Evidence.Watermarks
	if !near(ev.High, 0.95) || !near(ev.SuggestedHigh, 0.9) || !near(ev.SuggestedLow, 0.4) {
		t.Fatalf("evidence %+v", ev)
	}
	if !strings.Contains(r.Action, "from 95% to 90%") {
		t.Errorf("action %q", r.Action)
	}
}

func TestBothWatermarkChecksSuggestOnePair(t *testing.T) {
	// 95/85: too narrow and too high. The pair suggested for either clears
	// both: high 90, low 70.
	w := balanced()
	w.High, w.Low = 0.95, 0.85
	rs := Advise(w)
	if len(rs) != 2 || rs[0].Kind != KindWatermarkGap || rs[1].Kind != KindWatermarkHeadroom {
		t.Fatalf("got %v", kinds(rs))
	}
	for _, r := range rs {
		if ev := r.Evidence.Watermarks; !near(ev.SuggestedHigh, 0.9) || !near(ev.SuggestedLow, 0.7) {
			t.Errorf("%s suggests %v/%v, want 0.9/0.7", r.Kind, ev.SuggestedHigh, ev.SuggestedLow)
		}
	}
}

func TestWatermarkEdgesAndOptions(t *testing.T) {
	for _, tc := range []struct {
		name      string
		high, low float64
		o         Options
		want      []string
	}{
		// 0.6 - 0.4 is 0.19999999999999996 in floats: still 20 points.
		{"band of exactly 20 points", 0.6, 0.4, Options{}, nil},
		{"high of exactly 90%", 0.9, 0.4, Options{}, nil},
		{"band of 30 points against a 30 minimum", 0.7, 0.4, Options{MinWatermarkGap: 0.3}, nil},
		{"band of 30 points against a 35 minimum", 0.7, 0.4, Options{MinWatermarkGap: 0.35}, []string{KindWatermarkGap}},
		{"high 70% against a 65% ceiling", 0.7, 0.4, Options{MaxHigh: 0.65}, []string{KindWatermarkHeadroom}},
		{"low above high", 0.5, 0.6, Options{}, []string{KindWatermarkGap}},
	} {
		w := balanced()
		w.High, w.Low = tc.high, tc.low
		got := kinds(tc.o.Advise(w))
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDefaultOptionsAreTheDesign(t *testing.T) {
	o := Options{}.withDefaults()
	if o != DefaultOptions() {
		t.Errorf("zero options became %+v, want %+v", o, DefaultOptions())
	}
	if d := DefaultOptions(); d.WaitWindow.Minutes() != 10 || d.MaxWaitP95.Minutes() != 10 ||
		d.MaxIdle != 0.30 || d.MinWatermarkGap != 0.20 || d.MaxHigh != 0.90 {
		t.Errorf("defaults %+v", d)
	}
}
