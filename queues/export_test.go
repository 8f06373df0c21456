package queues

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// LoadScripts loads the job scripts into rdb's script cache, so that a
// test that loses one reply loses the script's own, not a NOSCRIPT error
// that would make the client send the script again.
func LoadScripts(ctx context.Context, rdb redis.Scripter) error {
	for _, s := range []*redis.Script{submitScript, submitManyScript, claimScript, finishScript, requeueScript, cancelScript, moveScript,
		placeScript} {
		if err := s.Load(ctx, rdb).Err(); err != nil {
			return err
		}
	}
	return nil
}

// AllKeys names one key of every family the namespace has, exported or
// not, for the test that checks they all carry the hash tag.
func (n Namespace) AllKeys() []string {
	return []string{n.Job("j"), n.JobLog("j"), n.JobMetrics("j"), n.JobIndex(), n.ActiveJobs(), n.Idempotency("k"),
		n.Outbox(), n.Workers(), n.Worker("w"), n.WorkerJobs("w"), n.WorkerTombstone("w"), n.WorkerIncarnation("w"),
		n.Leader(), n.Started(), n.series("s"), n.usage(), n.lives(), n.livesEnd(), n.launches(),
		n.JobPrefix() + "j", n.WorkerPrefix() + "w" + workerJobsSuffix, n.replicationMark()}
}

// Coalescer exposes the store's coalescer to tests.
type Coalescer struct{ c *coalescer }

// NewCoalescer returns a coalescer on rdb, as every Store has.
func NewCoalescer(rdb redis.UniversalClient) *Coalescer { return &Coalescer{c: &coalescer{rdb: rdb}} }

// Run runs script through the coalescer.
func (c *Coalescer) Run(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	return c.c.run(ctx, script, keys, args...)
}

// PretendSending marks as many pipelines in flight as may be, ones that
// never return.
func (c *Coalescer) PretendSending() {
	c.c.mu.Lock()
	c.c.inFlight = maxInFlight
	c.c.mu.Unlock()
}

// State reports how many pipelines are in flight and how many calls wait.
func (c *Coalescer) State() (inFlight, queued int) {
	c.c.mu.Lock()
	defer c.c.mu.Unlock()
	return c.c.inFlight, len(c.c.queue)
}

// SubmitGroupTwice records items as SubmitBatch does, then sends the very
// same calls again, as a client resending after a lost reply would; it
// returns both replies.
func (s *Store) SubmitGroupTwice(ctx context.Context, items []BatchItem) (first, second []Submitted, err error) {
	now := s.opts.Now()
	calls := make([]submitCall, len(items))
	todo := make([]int, len(items))
	for i, it := range items {
		if calls[i], err = s.prepareSubmit(ctx, it.Spec, it.Queue, now, new(jobs.Job)); err != nil {
			return nil, nil, err
		}
		todo[i] = i
	}
	for round := range 2 {
		var out []Submitted
		for i, r := range s.runSubmitGroups(ctx, calls, todo) {
			if r.err != nil {
				return nil, nil, r.err
			}
			j, dup, err := s.settle(ctx, &calls[i], r.verdict, r.id)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, Submitted{Job: *j, Duplicate: dup})
		}
		if round == 0 {
			first = out
		} else {
			second = out
		}
	}
	return first, second, nil
}

// SubmitEachAt records items as one run of SubmitBatch's groups does,
// item i prepared at times[i], and returns what became of each.
func (s *Store) SubmitEachAt(ctx context.Context, items []BatchItem, times []time.Time) ([]Submitted, error) {
	calls := make([]submitCall, len(items))
	todo := make([]int, len(items))
	for i, it := range items {
		var err error
		if calls[i], err = s.prepareSubmit(ctx, it.Spec, it.Queue, times[i], new(jobs.Job)); err != nil {
			return nil, err
		}
		todo[i] = i
	}
	var out []Submitted
	for i, r := range s.runSubmitGroups(ctx, calls, todo) {
		if r.err != nil {
			return nil, r.err
		}
		j, dup, err := s.settle(ctx, &calls[i], r.verdict, r.id)
		if err != nil {
			return nil, err
		}
		out = append(out, Submitted{Job: *j, Duplicate: dup})
	}
	return out, nil
}

// GroupCallAllocs is how many allocations groupCall makes for one group of
// n jobs of spec in q, prepared at one time, each with a key.
func GroupCallAllocs(ctx context.Context, s *Store, spec jobs.Spec, q Queue, n int) (float64, error) {
	now := s.opts.Now()
	calls, recorded, group := make([]submitCall, n), make([]jobs.Job, n), make([]int, n)
	for i := range calls {
		sp := spec
		sp.IdempotencyKey = fmt.Sprintf("allocs-%d", i)
		var err error
		if calls[i], err = s.prepareSubmit(ctx, sp, q, now, &recorded[i]); err != nil {
			return 0, err
		}
		group[i] = i
	}
	return testing.AllocsPerRun(20, func() { _ = groupCall(s, calls, group) }), nil
}
