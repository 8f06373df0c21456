package e2e

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// failoverRun is what submitThroughFailover measured.
type failoverRun struct {
	accepted  int           // submissions accepted (one per key)
	refused   int           // tries that got an error and were retried
	failover  time.Duration // from the kill until the new master served
	completed time.Duration // from the first submission until every job succeeded
}

// submitThroughFailover submits total jobs over NATS from senders
// connections, each retried under its idempotency key until accepted, and
// calls kill (which kills a Redis master and waits for its replacement,
// returning how long that took) once half of them are accepted. Then it
// checks what the foundation's TestSubmit500OverNATSExactlyOnce checks:
// every key maps to one job, every job succeeds, and the handler ran each
// exactly once and nothing else.
func submitThroughFailover(t *testing.T, p *plane, c *counter, total, senders int, kill func() time.Duration) failoverRun {
	t.Helper()
	keyOf := func(i int) string { return fmt.Sprintf("fo-%s-%d", p.ns, i) }
	ids := make([]string, total)
	errs := make([]error, total)
	var accepted, refused atomic.Int64
	var run failoverRun
	killed := make(chan struct{})
	var killOnce sync.Once
	burst, cancelBurst := context.WithTimeout(context.Background(), 75*time.Second)
	defer cancelBurst()
	start := time.Now()
	var wg sync.WaitGroup
	for g := range senders {
		cl := client.NewNATS(p.conn(t), p.subj)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < total; i += senders {
				for {
					ctx, cancel := context.WithTimeout(burst, 3*time.Second)
					r, err := cl.Submit(ctx, countSubmission(i, keyOf(i)))
					cancel()
					if err == nil {
						ids[i], errs[i] = r.JobID, nil
						if accepted.Add(1) == int64(total/2) {
							killOnce.Do(func() {
								go func() { run.failover = kill(); close(killed) }()
							})
						}
						break
					}
					errs[i] = err
					refused.Add(1)
					if burst.Err() != nil {
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	select {
	case <-killed:
	case <-time.After(60 * time.Second):
		t.Fatal("the master kill and failover did not finish within 60s")
	}
	run.accepted, run.refused = int(accepted.Load()), int(refused.Load())
	distinct := map[string]int{}
	for i := range total {
		if errs[i] != nil || ids[i] == "" {
			t.Fatalf("submission %d was never accepted: %v", i, errs[i])
		}
		if prev, dup := distinct[ids[i]]; dup {
			t.Fatalf("keys %d and %d got the same job %s", prev, i, ids[i])
		}
		distinct[ids[i]] = i
	}

	pending := map[string]bool{}
	for _, id := range ids {
		pending[id] = true
	}
	submitted := time.Since(start)
	lastLog := time.Now()
	testenv.Eventually(t, 60*time.Second, "every accepted job succeeded", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if time.Since(lastLog) > 5*time.Second {
			lastLog = time.Now()
			states := map[jobs.State]int{}
			for id := range pending {
				if j, err := p.store.Get(ctx, id); err == nil {
					states[j.State]++
				}
			}
			t.Logf("%s after the first submission, %d jobs not done yet: %v", time.Since(start).Round(time.Second), len(pending), states)
		}
		for id := range pending {
			j, err := p.store.Get(ctx, id)
			if err != nil {
				continue // the failover may still be settling: read again
			}
			switch j.State {
			case jobs.StateSucceeded:
				delete(pending, id)
			case jobs.StateFailed, jobs.StateCancelled:
				t.Fatalf("job %s ended %s: %s", id, j.State, j.LastError)
			}
		}
		return len(pending) == 0
	})
	run.completed = time.Since(start)

	// The same keys again, after the failover: each is the same job, and
	// nothing more runs.
	distinct[resubmitThenProbe(t, p, keyOf, ids, total/25, 30*time.Second)] = -1

	calls, n := c.snapshot()
	twice := 0
	for id, k := range calls {
		if _, ok := distinct[id]; !ok {
			t.Errorf("handler ran for job %s that no submission returned", id)
		}
		if k > 1 {
			twice++
			t.Errorf("job %s ran %d times", id, k)
		}
	}
	lost := 0
	for id := range distinct {
		if calls[id] == 0 {
			lost++
			t.Errorf("accepted job %s never ran", id)
		}
	}
	if n != total+1 {
		t.Errorf("handler ran %d times, want %d", n, total+1)
	}
	t.Logf("%d accepted (%d tries refused during the failover and retried) in %s, failover %s, all done %s after the first submission; lost %d, ran twice %d",
		run.accepted, run.refused, submitted.Round(time.Millisecond), run.failover.Round(time.Millisecond), run.completed.Round(time.Millisecond), lost, twice)
	return run
}

// waitReplicated writes a marker under key's hash slot on the master at
// addr and waits (WAIT) until a replica has everything up to it.
func waitReplicated(ctx context.Context, addr, key string) (int64, error) {
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	if err := c.Set(ctx, key+":replicated", "1", time.Minute).Err(); err != nil {
		return 0, err
	}
	return c.Wait(ctx, 1, 10*time.Second).Result()
}
