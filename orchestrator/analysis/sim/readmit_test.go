package sim

import (
	"container/heap"
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// startsOf runs tr and returns every start of every trace job, in time
// order, as the model saw them before each Decide (every tick decides, so
// none of these jobs, which run for minutes, is missed).
func startsOf(t *testing.T, tr trace.Trace, o Options) [][]time.Duration {
	t.Helper()
	s, err := newSim(tr, o)
	if err != nil {
		t.Fatal(err)
	}
	s.alwaysDecide, s.fullSnapshot = true, true
	starts := make([][]time.Duration, len(tr.Jobs))
	s.check = func(s *sim, snap policy.Snapshot) error {
		for i := range s.tasks {
			if tk := &s.tasks[i]; tk.state == tsRunning && !slices.Contains(starts[tk.job], tk.startedAt) {
				starts[tk.job] = append(starts[tk.job], tk.startedAt)
			}
		}
		return invariants(s, snap)
	}
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	return starts
}

// A burst job reclaimed from a loan goes back to the burst queue ahead of
// the burst jobs submitted after it, as the live queues put it: when fixed
// capacity frees up, it is lent and starts again before them, though they
// have waited in that queue longer than its new attempt.
//
// Two 1 h burst jobs are lent the two fixed slots at 0; two more arrive
// at 5 min and wait in burst (the on-demand pool takes hours to start); a
// 20 min core job at 25 min reclaims one of the first two, which
// checkpoints for a minute and waits in burst from 26 min. At 46 min the
// core job ends: the slot goes to the reclaimed job, and the later ones
// start only when slots free after it.
func TestReclaimedJobStartsBeforeLaterSubmittedOnes(t *testing.T) {
	od := onDemand(1, 1)
	od.StartupDelay, od.MaxWorkers = 10*time.Hour, 1
	o := Hybrid(Options{Pools: []policy.Pool{quota(1), od}, FixedSlots: 2}, 1, 0.4)
	o.CheckpointInterval, o.CheckpointOverhead = 10*time.Minute, time.Minute
	tr := mkTrace(
		burstJob(0, time.Hour, true), burstJob(0, time.Hour, true),
		burstJob(5*time.Minute, time.Hour, true), burstJob(5*time.Minute, time.Hour, true),
		coreJob(25*time.Minute, 20*time.Minute),
	)
	starts := startsOf(t, tr, o)
	var reclaimed []time.Duration
	var later []time.Duration
	for ji, j := range tr.Jobs {
		switch {
		case j.Class != "burst":
		case j.Submit == 0 && len(starts[ji]) == 2:
			reclaimed = starts[ji]
		case j.Submit == 0 && len(starts[ji]) != 1:
			t.Fatalf("job %d started at %v: want once or, reclaimed, twice", ji, starts[ji])
		case j.Submit > 0:
			if len(starts[ji]) != 1 {
				t.Fatalf("job %d (submitted at %v) started at %v: want once", ji, j.Submit, starts[ji])
			}
			later = append(later, starts[ji][0])
		}
	}
	if reclaimed == nil || len(later) != 2 {
		t.Fatalf("starts %v: want one job reclaimed and started again, and two later ones", starts)
	}
	again := reclaimed[1]
	if again < 46*time.Minute || again > 47*time.Minute {
		t.Errorf("the reclaimed job started again at %v, want as the core job ended at 46 min", again)
	}
	for _, at := range later {
		if at <= again {
			t.Errorf("a job submitted at 5 min started at %v, before the reclaimed one started again at %v", at, again)
		}
	}
}

// A queue serves readmitted entries first, by submission, then the rest
// by queue time, whatever order they were added in: the order of the live
// pending list, where a requeued delivery goes to the head behind only
// the readmitted ones admitted before it.
func TestQueueServesReadmittedFirst(t *testing.T) {
	var q taskQueue
	entries := []queueEntry{
		{queuedAt: 2 * time.Minute, submit: 2 * time.Minute, task: 0},
		{queuedAt: 50 * time.Minute, submit: 20 * time.Minute, task: 1, readmitted: true},
		{queuedAt: time.Minute, submit: time.Minute, task: 2},
		{queuedAt: 40 * time.Minute, submit: 5 * time.Minute, task: 3, readmitted: true},
		{queuedAt: 30 * time.Minute, submit: 30 * time.Minute, task: 4},
	}
	for _, e := range entries {
		q.add(e)
	}
	var got []int32
	for {
		e, ok := q.head(func(queueEntry) bool { return true })
		if !ok {
			break
		}
		got = append(got, e.task)
		heap.Pop(&q)
	}
	if want := []int32{3, 1, 2, 0, 4}; !slices.Equal(got, want) {
		t.Fatalf("served %v, want %v (readmitted by submission, then by queue time)", got, want)
	}
}
