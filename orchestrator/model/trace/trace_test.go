package trace

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func sec(n float64) time.Duration { return time.Duration(n * float64(time.Second)) }

// demandTrace is small enough to work out Demand by hand:
//
//	A [0,10) 2 slots, B [5,15) 3, C [10,11) 1, D [12,13) 4
func demandTrace() Trace {
	return Trace{Jobs: []Job{
		{Submit: 0, Duration: sec(10), Slots: 2, Class: jobs.ClassCore},
		{Submit: sec(5), Duration: sec(10), Slots: 3, Class: jobs.ClassBurst},
		{Submit: sec(10), Duration: sec(1), Slots: 1, Class: jobs.ClassBurst},
		{Submit: sec(12), Duration: sec(1), Slots: 4, Class: jobs.ClassBurst},
	}}
}

func TestSpan(t *testing.T) {
	// B ends last although D is submitted last.
	if got := demandTrace().Span(); got != sec(15) {
		t.Errorf("Span = %v, want 15s", got)
	}
	if got := (Trace{}).Span(); got != 0 {
		t.Errorf("empty Span = %v", got)
	}
}

func TestDemand(t *testing.T) {
	for _, c := range []struct {
		step time.Duration
		want []int
	}{
		// Samples at 0, 5, 10: A alone; A and B; A has ended at 10 (half-open), B and C.
		// D runs only between samples and is missed, as documented.
		{sec(5), []int{2, 5, 4}},
		{sec(4), []int{2, 2, 5, 7}},
		{sec(1), []int{2, 2, 2, 2, 2, 5, 5, 5, 5, 5, 4, 3, 7, 3, 3}},
		{sec(15), []int{2}},
		{sec(100), []int{2}},
		{sec(7), []int{2, 5, 3}},
	} {
		if got := demandTrace().Demand(c.step); !slices.Equal(got, c.want) {
			t.Errorf("Demand(%v) = %v, want %v", c.step, got, c.want)
		}
	}
	if got := (Trace{}).Demand(time.Second); len(got) != 0 {
		t.Errorf("empty trace: Demand = %v", got)
	}
}

func TestDemandPanicsOnBadStep(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Demand(0) did not panic")
		}
	}()
	demandTrace().Demand(0)
}

func TestValidate(t *testing.T) {
	if err := demandTrace().Validate(); err != nil {
		t.Errorf("valid trace: %v", err)
	}
	bad := demandTrace()
	bad.Jobs[1].Duration = 0
	bad.Jobs[2].Class = "gold"
	bad.Jobs[3].Submit = sec(1)
	err := bad.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"job 1: duration:", `job 2: class: "gold"`, "job 3: submitted before job 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestSortJobsIsStable(t *testing.T) {
	js := []Job{{Submit: 3, Team: "c"}, {Submit: 1, Team: "a1"}, {Submit: 2, Team: "b"}, {Submit: 1, Team: "a2"}, {Submit: 0, Team: "z"}, {Submit: 1, Team: "a3"}}
	SortJobs(js)
	var got []string
	for _, j := range js {
		got = append(got, j.Team)
	}
	if want := "z a1 a2 a3 b c"; strings.Join(got, " ") != want {
		t.Errorf("got %v, want %s", got, want)
	}
}
