package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers"
)

func countCatalog(t *testing.T) *jobs.Catalog {
	t.Helper()
	cat, err := jobs.NewCatalog(map[string]jobs.Template{
		"count": {Handler: "count", Class: jobs.ClassCore, Params: map[string]jobs.ParamSpec{
			"i": {Type: jobs.ParamInt, Required: true},
		}},
	})
	if err != nil {
		t.Fatalf("NewCatalog: %v", err)
	}
	return cat
}

// counter counts handler calls per job ID.
type counter struct {
	mu    sync.Mutex
	calls map[string]int
	total int
}

func (c *counter) handler(ctx context.Context, r *workers.Run) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[r.JobID]++
	c.total++
	return nil
}

func (c *counter) snapshot() (map[string]int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[string]int, len(c.calls))
	for k, v := range c.calls {
		m[k] = v
	}
	return m, c.total
}

func startCountWorker(t *testing.T, p *plane, c *counter) {
	t.Helper()
	w, err := workers.New(p.store, workers.Options{Pool: "fixed", Slots: 16, PollInterval: 5 * time.Millisecond,
		Queues: []queues.Queue{queues.QueueCore, queues.QueueLoan}, Heartbeat: 200 * time.Millisecond,
		LogDir: t.TempDir(), CheckpointDir: t.TempDir(), Handlers: map[string]workers.Handler{"count": c.handler},
		Events: p.pub, Logger: quietLogger()})
	if err != nil {
		t.Fatalf("workers.New: %v", err)
	}
	if err := w.Start(context.Background()); err != nil {
		t.Fatalf("worker.Start: %v", err)
	}
	t.Cleanup(w.Stop)
}

// resubmitThenProbe submits every every-th key of ids again, each of which
// must come back as a duplicate of the same job, then a fresh probe job,
// and waits up to within for the probe to succeed: once it ran, the worker
// had every chance to (wrongly) run a duplicate enqueued before it. It
// returns the probe's job ID; keyOf(-1) is the probe's key.
func resubmitThenProbe(t *testing.T, p *plane, keyOf func(int) string, ids []string, every int, within time.Duration) string {
	t.Helper()
	cl := client.NewNATS(p.conn(t), p.subj)
	for i := 0; i < len(ids); i += max(every, 1) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		r, err := cl.Submit(ctx, countSubmission(i, keyOf(i)))
		cancel()
		if err != nil {
			t.Fatalf("resubmission %d: %v", i, err)
		}
		if !r.Duplicate || r.JobID != ids[i] {
			t.Errorf("resubmission %d: duplicate=%v id=%s, want duplicate=true id=%s", i, r.Duplicate, r.JobID, ids[i])
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	probe, err := cl.Submit(ctx, countSubmission(-1, keyOf(-1)))
	cancel()
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	testenv.Eventually(t, within, "probe job succeeded", func() bool {
		return p.getJob(t, probe.JobID).State == jobs.StateSucceeded
	})
	return probe.JobID
}

func countSubmission(i int, key string) jobs.Submission {
	return jobs.Submission{Template: "count", Params: map[string]json.RawMessage{"i": json.RawMessage(fmt.Sprint(i))},
		IdempotencyKey: key}
}

func TestSubmit500OverNATSExactlyOnce(t *testing.T) {
	const total, senders = 500, 8
	p := newPlane(t, countCatalog(t), &controller.Options{Tick: 200 * time.Millisecond, WorkerTTL: 2 * time.Second, LeaderTTL: 2 * time.Second})
	c := &counter{calls: map[string]int{}}
	startCountWorker(t, p, c)

	keyOf := func(i int) string { return fmt.Sprintf("e2e-%s-%d", p.ns, i) }
	ids := make([]string, total)
	errs := make([]error, total)
	var wg sync.WaitGroup
	start := time.Now()
	// One deadline for the whole burst, so an intake that stops answering
	// fails the test instead of retrying for minutes.
	burst, cancelBurst := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancelBurst()
	for g := 0; g < senders; g++ {
		cl := client.NewNATS(p.conn(t), p.subj)
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := g; i < total; i += senders {
				r, err := cl.Submit(burst, countSubmission(i, keyOf(i)))
				if err == nil && r.Duplicate {
					err = fmt.Errorf("first submission of %d reported duplicate", i)
				}
				ids[i], errs[i] = r.JobID, err
			}
		}(g)
	}
	wg.Wait()
	t.Logf("submitted %d jobs over NATS from %d connections in %s", total, senders, time.Since(start))

	distinct := map[string]int{}
	for i := range total {
		if errs[i] != nil {
			t.Fatalf("submission %d: %v", i, errs[i])
		}
		if ids[i] == "" {
			t.Fatalf("submission %d: empty job ID", i)
		}
		if prev, dup := distinct[ids[i]]; dup {
			t.Fatalf("submissions %d and %d got the same job ID %s", prev, i, ids[i])
		}
		distinct[ids[i]] = i
	}
	if len(distinct) != total {
		t.Fatalf("%d distinct job IDs, want %d", len(distinct), total)
	}

	// Every job reaches succeeded.
	pending := map[string]bool{}
	for _, id := range ids {
		pending[id] = true
	}
	testenv.Eventually(t, 45*time.Second, "all 500 jobs succeeded", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for id := range pending {
			j, err := p.store.Get(ctx, id)
			if err != nil {
				t.Fatalf("store.Get %s: %v", id, err)
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
	t.Logf("all %d succeeded %s after the first submission", total, time.Since(start))

	calls, n := c.snapshot()
	if n != total {
		t.Errorf("handler ran %d times, want %d", n, total)
	}
	if len(calls) != total {
		t.Errorf("handler saw %d distinct jobs, want %d", len(calls), total)
	}
	for _, id := range ids {
		if calls[id] != 1 {
			t.Errorf("job %s: handler ran %d times, want exactly 1", id, calls[id])
		}
	}
	for id := range calls {
		if _, ok := distinct[id]; !ok {
			t.Errorf("handler ran for job %s that no submission returned", id)
		}
	}
	for _, id := range ids[:5] {
		if j := p.getJob(t, id); j.Attempt != 1 {
			t.Errorf("job %s: attempt %d, want 1", id, j.Attempt)
		}
	}

	// Resubmitting with the same idempotency keys returns the same jobs and
	// runs nothing.
	probe := resubmitThenProbe(t, p, keyOf, ids, total/50, 20*time.Second)
	calls, n = c.snapshot()
	if n != total+1 || calls[probe] != 1 {
		t.Errorf("after 50 duplicate resubmissions and one probe: %d handler calls, want %d", n, total+1)
	}
}
