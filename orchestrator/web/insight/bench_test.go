package insight_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/usage"
)

// busyDay is a day of n one-slot attempts of 5 minutes spread over 20
// spot workers and the quota, ending at now.
func busyDay(now time.Time, n int) ([]usage.AttemptUsage, []usage.WorkerLife) {
	start := now.Add(-20 * time.Hour)
	var lives []usage.WorkerLife
	for w := range 40 {
		lives = append(lives, usage.WorkerLife{ID: fmt.Sprintf("spot-%d", w), Pool: "spot", Slots: 2, Start: start})
	}
	attempts := make([]usage.AttemptUsage, 0, n)
	step := 20 * time.Hour / time.Duration(n)
	for i := range n {
		s := start.Add(time.Duration(i) * step)
		u := usage.AttemptUsage{JobID: fmt.Sprintf("j%d", i), Attempt: 1, Team: fmt.Sprintf("team-%d", i%7), Template: "t",
			Queued: s.Add(-time.Minute), Start: s, End: s.Add(5 * time.Minute), Outcome: "succeeded"}
		if i%2 == 0 {
			u.Pool, u.Worker = "spot", fmt.Sprintf("spot-%d", i%40)
		} else {
			u.Pool, u.Worker = "onprem", "fixed-1"
		}
		attempts = append(attempts, u)
	}
	return attempts, lives
}

// BenchmarkOverviewOf is the work of one overview after the reads: a day
// of 20,000 attempts priced, bucketed and summed.
func BenchmarkOverviewOf(b *testing.B) {
	now := time.Date(2026, 11, 2, 21, 0, 0, 0, time.UTC)
	attempts, lives := busyDay(now, 20000)
	// The quota must hold the fixed attempts' overlap (5 min every 3.6 s
	// on the fixed side: about 84 at once).
	src := insight.Source{Pools: pools(), Quota: map[string]int{"onprem": 100}}
	in := insight.Inputs{Usage: attempts, Lives: lives}
	b.ReportAllocs()
	for b.Loop() {
		o := src.OverviewOf(now, in)
		if len(o.Problems) > 0 {
			b.Fatal(o.Problems)
		}
	}
}

// BenchmarkUsageRead reads a day of 20,000 usage records back from Redis.
func BenchmarkUsageRead(b *testing.B) {
	rdb, ns := testenv.Redis(b)
	clk := testenv.NewClock(t0)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns, Now: clk.Now})
	ctx := context.Background()
	w := queues.WorkerInfo{ID: "fixed-1", Pool: "onprem", Slots: 4, StartedAt: t0}
	if _, err := store.Heartbeat(ctx, w, nil); err != nil {
		b.Fatal(err)
	}
	const n = 20000
	for i := range n {
		clk.Set(t0.Add(time.Duration(i) * 3 * time.Second))
		sub, err := store.Submit(ctx, jobs.Spec{Template: "t", Team: "ml", Command: []string{"true"}, Class: jobs.ClassCore,
			Rhythm: jobs.RhythmPeriodic, Timeout: jobs.Duration(time.Hour), Grace: jobs.Duration(time.Second)}, queues.QueueCore)
		if err != nil {
			b.Fatal(err)
		}
		j, ok, err := store.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, w.ID)
		if err != nil || !ok {
			b.Fatal(ok, err)
		}
		code := 0
		clk.Set(t0.Add(time.Duration(i)*3*time.Second + time.Second))
		if _, err := store.Finish(ctx, j, w.ID, jobs.StateSucceeded, &code, ""); err != nil {
			b.Fatal(err)
		}
	}
	acct := usage.New(store)
	b.ResetTimer()
	for b.Loop() {
		active, err := store.ActiveJobs(ctx)
		if err != nil {
			b.Fatal(err)
		}
		got, err := acct.Usage(ctx, active, t0, t0.Add(24*time.Hour))
		if err != nil || len(got) != n {
			b.Fatal(len(got), err)
		}
	}
}
