package queues_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// TestTakeFitsShares: a take with a fit pops a job only when it fits
// what the worker has free, in queue order, and the first that does not
// stays first in line. Each case submits jobs of the given shares (0 =
// whole) to core, then takes once with the fit.
func TestTakeFitsShares(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		shares []float64
		fit    queues.TakeFit
		took   int // how many of the first are taken
	}{
		{"two halves in one whole slot", []float64{0.5, 0.5, 0.5}, queues.TakeFit{Whole: 1}, 2},
		{"a half into the room another half left", []float64{0.5, 0.5}, queues.TakeFit{Rooms: []int{500}}, 1},
		{"a whole job needs a whole slot", []float64{0, 0.5}, queues.TakeFit{Rooms: []int{500}}, 0},
		{"a whole job ends the take, and the half behind it waits", []float64{0.5, 0, 0.5}, queues.TakeFit{Whole: 1}, 1},
		{"best fit leaves the bigger room", []float64{0.2, 0.7}, queues.TakeFit{Rooms: []int{700, 200}}, 2},
		{"nothing free takes nothing", []float64{0.001}, queues.TakeFit{}, 0},
		{"whole slots take whole jobs as without a fit", []float64{0, 0, 0}, queues.TakeFit{Whole: 2}, 2},
		{"thousandths add up exactly", []float64{0.3, 0.3, 0.4, 0.001}, queues.TakeFit{Whole: 1}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := newStore(t)
			ctx := context.Background()
			var ids []string
			for i, share := range tc.shares {
				sp := spec(fmt.Sprint("k", i))
				sp.GPUShare = share
				r, err := s.Submit(ctx, sp, queues.QueueCore)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, r.Job.ID)
			}
			fit := tc.fit
			took, err := s.Take(ctx, queues.TakeRequest{Queues: []queues.Queue{queues.QueueCore}, Claimant: alice, Max: 32,
				Token: fmt.Sprint("t", takes.Add(1)), Fit: &fit})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, j := range took.Jobs {
				got = append(got, j.ID)
			}
			if want := ids[:tc.took]; strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("took %v, want %v", got, want)
			}
			// The rest are still queued, in order: the next take without
			// a fit gets the first of them.
			if tc.took < len(ids) {
				next, err := take(ctx, s, []queues.Queue{queues.QueueCore}, alice, 1)
				if err != nil || len(next.Jobs) != 1 || next.Jobs[0].ID != ids[tc.took] {
					t.Fatalf("the next take got %+v (%v), want %s", next.Jobs, err, ids[tc.took])
				}
				if next.Jobs[0].State != jobs.StateRunning {
					t.Fatalf("the job left behind was not claimable: %+v", next.Jobs[0])
				}
			}
		})
	}
}

// TestTakeFitDropsStaleHeads: a stale delivery at the head of a queue is
// dropped on the way, with a fit as without, and does not stop the take.
func TestTakeFitDropsStaleHeads(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	gone, _ := s.Submit(ctx, spec("gone"), queues.QueueCore)
	if _, err := s.Cancel(ctx, gone.Job.ID); err != nil {
		t.Fatal(err)
	}
	qname := s.Namespace().AsynqQueue(queues.QueueCore)
	if err := s.Redis().LPush(ctx, "asynq:{"+qname+"}:pending", queues.TaskID(gone.Job.ID, 1)).Err(); err != nil {
		t.Fatal(err)
	}
	half := spec("half")
	half.GPUShare = 0.5
	h, _ := s.Submit(ctx, half, queues.QueueCore)
	took, err := s.Take(ctx, queues.TakeRequest{Queues: []queues.Queue{queues.QueueCore}, Claimant: alice, Max: 32,
		Token: fmt.Sprint("t", takes.Add(1)), Fit: &queues.TakeFit{Rooms: []int{500}}})
	if err != nil || len(took.Jobs) != 1 || took.Jobs[0].ID != h.Job.ID || took.Dropped != 1 {
		t.Fatalf("took %+v (%v), want %s and one dropped", took, err, h.Job.ID)
	}
}
