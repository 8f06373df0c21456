package trace

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func TestBusyTimeIsExactNotSampled(t *testing.T) {
	// 0-10 min: 2 slots; 10-10.5 min: 5 (a 30 s job a minute sample would
	// miss); 10.5-20 min: 2; 20-30 min: none; 30-40 min: 1, and a job of 3
	// slots starting at 40 min as that one ends is not stacked on it.
	tr := Trace{Jobs: []Job{
		{Submit: 0, Duration: 20 * time.Minute, Slots: 2, Class: jobs.ClassCore},
		{Submit: 10 * time.Minute, Duration: 30 * time.Second, Slots: 3, Class: jobs.ClassBurst},
		{Submit: 30 * time.Minute, Duration: 10 * time.Minute, Slots: 1, Class: jobs.ClassBurst},
		{Submit: 40 * time.Minute, Duration: 5 * time.Minute, Slots: 3, Class: jobs.ClassBurst},
	}}
	want := []time.Duration{10 * time.Minute, 10 * time.Minute, 19*time.Minute + 30*time.Second, 5 * time.Minute, 0, 30 * time.Second}
	got := tr.BusyTime()
	if len(got) != len(want) {
		t.Fatalf("busy time %v, want %v", got, want)
	}
	var sum time.Duration
	for k := range want {
		sum += got[k]
		if got[k] != want[k] {
			t.Errorf("time at %d slots: %v, want %v", k, got[k], want[k])
		}
	}
	if sum != tr.Span() {
		t.Errorf("busy time adds up to %v, the span is %v", sum, tr.Span())
	}
}

// Jobs that share a GPU count at their share, rounded up to whole GPUs:
// two halves need one, a third half a second one, in BusyTime and Demand
// alike.
func TestBusyTimeCountsSharesPacked(t *testing.T) {
	half := func(at time.Duration) Job {
		return Job{Submit: at, Duration: time.Hour, Slots: 1, Class: jobs.ClassBurst, Share: 500}
	}
	tr := Trace{Jobs: []Job{half(0), half(0), half(30 * time.Minute)}}
	want := []time.Duration{0, time.Hour, 30 * time.Minute} // 1 GPU before and after the third, 2 with it
	got := tr.BusyTime()
	if len(got) != len(want) || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("busy time %v, want %v", got, want)
	}
	if d := tr.Demand(30 * time.Minute); len(d) != 3 || d[0] != 1 || d[1] != 2 || d[2] != 1 {
		t.Errorf("demand %v, want [1 2 1]", d)
	}
}
