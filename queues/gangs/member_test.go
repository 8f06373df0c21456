package gangs_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/gangs"
)

// joiner is a worker joining with the test's clock and no drain.
func joiner(worker string, timeout time.Duration) gangs.Joiner {
	return gangs.Joiner{Worker: worker, Incarnation: "i" + worker, StartTimeout: timeout, Now: time.Now,
		Draining: func() bool { return false }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

// joinBoth joins both members of a placed gang at once and returns what
// each Join gave and when it returned.
func joinBoth(s *store, ds []queues.Delivery) ([2]gangs.Started, [2]error, [2]time.Time) {
	var got [2]gangs.Started
	var errs [2]error
	var at [2]time.Time
	var wg sync.WaitGroup
	for i, w := range []string{"w0", "w1"} {
		wg.Go(func() {
			got[i], errs[i] = s.Member(ds[i], joiner(w, time.Minute)).Join(context.Background())
			at[i] = time.Now()
		})
	}
	wg.Wait()
	return got, errs, at
}

// Both members of a gang joining at once start: each gets the running
// record of the one attempt, its own place, and member 0's coordinator.
func TestJoinStartsEveryMember(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	id, ds := placedGang(t, s)
	got, errs, _ := joinBoth(s, ds)
	for i := range 2 {
		if errs[i] != nil {
			t.Fatalf("member %d's Join: %v", i, errs[i])
		}
		g := got[i]
		if g.Job.ID != id || g.Job.State != jobs.StateRunning || g.Job.Attempt != ds[0].Attempt || g.Job.Worker != "w0" {
			t.Fatalf("member %d started on %+v; want %s running at attempt %d under w0", i, g.Job, id, ds[0].Attempt)
		}
		if g.Member != i || g.Members != 2 {
			t.Fatalf("member %d's place: %d of %d", i, g.Member, g.Members)
		}
	}
	if got[0].Coordinator == "" || got[0].Coordinator != got[1].Coordinator {
		t.Fatalf("coordinators %q and %q, want member 0's for both", got[0].Coordinator, got[1].Coordinator)
	}
}

// A member whose gang cannot assemble (member 1's worker never came)
// gives up at its deadline and moves the gang on as a new, unplaced
// attempt, which it no longer lists as running.
func TestJoinTimesOutAndMovesTheGangOn(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	id, ds := placedGang(t, s)
	_, err := s.Member(ds[0], joiner("w0", 200*time.Millisecond)).Join(ctx)
	if !errors.Is(err, gangs.ErrTimeout) {
		t.Fatalf("Join = %v, want ErrTimeout", err)
	}
	j, err := s.Get(ctx, id)
	if err != nil || j.State != jobs.StateQueued || j.Attempt != ds[0].Attempt+1 || j.Placed != nil {
		t.Fatalf("after the give-up: %s at %d placed %v (%v); want queued, unplaced, at %d", j.State, j.Attempt, j.Placed, err, ds[0].Attempt+1)
	}
	if n, _ := s.Redis().SCard(ctx, s.Namespace().WorkerJobs("w0")).Result(); n != 0 {
		t.Error("w0 still lists the gang it gave up")
	}
	// Member 1's delivery, late, is stale.
	if _, err := s.Member(ds[1], joiner("w1", time.Minute)).Join(ctx); !errors.Is(err, gangs.ErrStale) {
		t.Fatalf("the late member's Join = %v, want ErrStale", err)
	}
}

// A member whose worker starts to drain while the gang assembles gives up
// and moves the gang on; one whose worker stops (its context ends) too.
func TestJoinGivesUpOnDrainAndStop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newStore(t)
	id, ds := placedGang(t, s)
	w := joiner("w0", time.Minute)
	w.Draining = func() bool { return true }
	if _, err := s.Member(ds[0], w).Join(ctx); !errors.Is(err, gangs.ErrDraining) {
		t.Fatalf("Join on a draining worker = %v, want ErrDraining", err)
	}
	if j, _ := s.Get(ctx, id); j.Attempt != ds[0].Attempt+1 {
		t.Fatalf("after the drain the gang is at attempt %d, want %d", j.Attempt, ds[0].Attempt+1)
	}

	s, _ = newStore(t)
	id, ds = placedGang(t, s)
	stop, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := s.Member(ds[0], joiner("w0", time.Minute)).Join(stop); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Join of a stopping worker = %v, want its context's error", err)
	}
	if j, _ := s.Get(ctx, id); j.Attempt != ds[0].Attempt+1 {
		t.Fatalf("after the stop the gang is at attempt %d, want %d", j.Attempt, ds[0].Attempt+1)
	}
}

// BenchmarkStartSkew reports how far apart the two members of a gang,
// joining at once on two workers, leave Join to start their processes:
// the start barrier's own skew, which a member that claims first and polls
// the barrier (Poll) bounds. The e2e gang tests log the skew of whole
// worker processes, which adds process starts on a shared machine.
//
//	go test ./queues/gangs/ -run '^$' -bench StartSkew -benchtime 20x
func BenchmarkStartSkew(b *testing.B) {
	var total, worst time.Duration
	for range b.N {
		b.StopTimer()
		s, _ := newStore(b)
		_, ds := placedGang(b, s)
		b.StartTimer()
		_, errs, at := joinBoth(s, ds)
		for i, err := range errs {
			if err != nil {
				b.Fatalf("member %d's Join: %v", i, err)
			}
		}
		skew := at[0].Sub(at[1]).Abs()
		total += skew
		worst = max(worst, skew)
	}
	b.ReportMetric(float64(total.Microseconds())/1e3/float64(b.N), "ms-skew")
	b.ReportMetric(float64(worst.Microseconds())/1e3, "ms-skew-max")
	b.ReportMetric(0, "ns/op") // the figures above are the ones that mean something
}
