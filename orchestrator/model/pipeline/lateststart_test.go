package pipeline

import (
	"testing"
	"time"
)

func TestExpectedDurationIsTheP90(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		name    string
		history []time.Duration
		want    time.Duration
		ok      bool
	}{
		{"none", nil, 0, false},
		{"one", []time.Duration{7 * s}, 7 * s, true},
		// ceil(0.9*10) = 9th of 1..10 s.
		{"ten, unsorted", []time.Duration{10 * s, 1 * s, 9 * s, 2 * s, 8 * s, 3 * s, 7 * s, 4 * s, 6 * s, 5 * s}, 9 * s, true},
		// ceil(0.9*3) = 3rd: with few runs the slowest counts.
		{"three", []time.Duration{2 * s, 30 * s, 3 * s}, 30 * s, true},
		// ceil(0.9*20) = 18th of 1..20 s.
		{"twenty", seconds(20), 18 * s, true},
	} {
		got, ok := ExpectedDuration(c.history)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: ExpectedDuration = %v, %v; want %v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func seconds(n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(i+1) * time.Second
	}
	return out
}

func TestLatestStart(t *testing.T) {
	due := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	if got, want := LatestStart(due, []time.Duration{20 * time.Minute, 40 * time.Minute}, 3*time.Hour), due.Add(-40*time.Minute); !got.Equal(want) {
		t.Errorf("with history: %v, want %v", got, want)
	}
	if got, want := LatestStart(due, nil, 3*time.Hour), due.Add(-3*time.Hour); !got.Equal(want) {
		t.Errorf("without history (timeout fallback): %v, want %v", got, want)
	}
}
