package workers_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers"
)

// dequeueCounter counts asynq's dequeue scripts by the queue they look in.
type dequeueCounter struct {
	placeQueue string // the asynq name of the worker's placement queue
	place, all atomic.Int64
	takes      atomic.Int64 // the taker's scripts (queues.Store.Take)
}

func (*dequeueCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (d *dequeueCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		// asynq's dequeue is the script whose first two keys are a
		// queue's pending list and its paused flag.
		if len(args) > 4 && strings.EqualFold(cmd.Name(), "evalsha") {
			k1, _ := args[3].(string)
			k2, _ := args[4].(string)
			if len(args) > 8 {
				// The take's first queue follows four keys of the worker's.
				k5, _ := args[7].(string)
				k6, _ := args[8].(string)
				if strings.HasSuffix(k5, ":pending") && strings.HasSuffix(k6, ":paused") && !strings.HasSuffix(k1, ":pending") {
					d.takes.Add(1)
				}
			}
			if strings.HasSuffix(k1, ":pending") && strings.HasSuffix(k2, ":paused") {
				d.all.Add(1)
				if strings.Contains(k1, "{"+d.placeQueue+"}") {
					d.place.Add(1)
				}
			}
		}
		return next(ctx, cmd)
	}
}
func (*dequeueCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestSharedJobsDoNotPollThePlacementQueue: a stream of jobs from a shared
// queue costs one dequeue each, not a second one that finds the worker's
// placement queue empty first: that queue is looked at every 100 ms
// whatever the load. (Placed jobs themselves are the gang and
// sized-job tests' concern.)
func TestSharedJobsDoNotPollThePlacementQueue(t *testing.T) {
	e := newEnv(t)
	// A short poll: the placement queue is still looked in only every
	// 100 ms, its own slower interval.
	o, ran, dc, spec := countingStream(e, "w-consumers")
	o.AsynqShared = true // the asynq servers' way; the taker's is TestTakerTakesAStreamInFewScripts
	const n = 300
	ids := make([]string, n)
	for i := range ids {
		ids[i] = e.submit(spec, queues.QueueCore).ID
	}
	start := time.Now()
	e.start(o)
	for _, id := range ids {
		e.waitFor(id, 30*time.Second, "succeeded", func(j jobs.Job) bool { return j.State == jobs.StateSucceeded })
	}
	took := time.Since(start)
	if got := ran.Load(); got != n {
		t.Fatalf("%d handler runs for %d jobs", got, n)
	}
	place, all := dc.place.Load(), dc.all.Load()
	// One look per 100 ms, with room for the start and the end.
	limit := int64(took/(100*time.Millisecond)) + 4
	if place > limit {
		t.Errorf("%d looks in the placement queue while %d jobs ran in %s; want at most %d (one per 100 ms)", place, n, took, limit)
	}
	if all-place < n {
		t.Errorf("%d dequeues from the shared queues for %d jobs", all-place, n)
	}
	t.Logf("%d jobs in %s: %d dequeues from shared queues, %d looks in the placement queue", n, took.Round(time.Millisecond), all-place, place)
}

// TestTakerTakesAStreamInFewScripts: where the store writes the tasks, a
// worker takes its shared deliveries with one script per take, several
// at a time when several slots are free, and asynq's dequeue never runs
// on the shared queues: every job runs once, and asynq holds nothing
// after.
func TestTakerTakesAStreamInFewScripts(t *testing.T) {
	e := newEnv(t)
	o, ran, dc, spec := countingStream(e, "w-taker")
	const n = 300
	ids := make([]string, n)
	for i := range ids {
		q := queues.QueueCore
		if i%3 == 0 {
			q = queues.QueueLoan
		}
		ids[i] = e.submit(spec, q).ID
	}
	e.start(o)
	for _, id := range ids {
		e.waitFor(id, 30*time.Second, "succeeded", func(j jobs.Job) bool { return j.State == jobs.StateSucceeded && j.Runs == 1 })
	}
	if got := ran.Load(); got != n {
		t.Fatalf("%d handler runs for %d jobs", got, n)
	}
	takes, shared := dc.takes.Load(), dc.all.Load()-dc.place.Load()
	if shared != 0 {
		t.Errorf("%d asynq dequeues from the shared queues; the taker serves them", shared)
	}
	if takes == 0 || takes > n {
		t.Errorf("%d takes for %d jobs; want between 1 and %d", takes, n, n)
	}
	insp := asynq.NewInspectorFromRedisClient(e.rdb)
	for _, q := range []queues.Queue{queues.QueueCore, queues.QueueLoan} {
		qi, err := insp.GetQueueInfo(e.store.Namespace().AsynqQueue(q))
		if err != nil {
			t.Fatal(err)
		}
		if qi.Size != 0 {
			t.Errorf("asynq still holds %d tasks of %s: %+v", qi.Size, q, qi)
		}
	}
	t.Logf("%d jobs: %d takes (%.2f jobs a take)", n, takes, float64(n)/float64(takes))
}

// countingStream is a worker of four slots, polling every 10 ms, whose
// handler "count" counts its runs, with dc counting its dequeues and
// takes, and the spec of a job that runs it.
func countingStream(e *env, id string) (workers.Options, *atomic.Int64, *dequeueCounter, jobs.Spec) {
	o := e.options()
	o.ID = id
	o.Slots = 4
	o.PollInterval = 10 * time.Millisecond
	ran := new(atomic.Int64)
	o.Handlers = map[string]workers.Handler{"count": func(context.Context, *workers.Run) error {
		ran.Add(1)
		return nil
	}}
	dc := &dequeueCounter{placeQueue: e.store.Namespace().AsynqQueue(queues.PlaceQueue(o.ID))}
	e.rdb.AddHook(dc)
	spec := jobs.Spec{Handler: "count", Class: jobs.ClassCore, Rhythm: jobs.RhythmPeriodic,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}
	return o, ran, dc, spec
}
