package queues

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/jobs"
)

// BatchItem is one job of SubmitBatch: its spec and the queue it goes to.
type BatchItem struct {
	Spec  jobs.Spec
	Queue Queue
}

// BatchResult is the outcome of one item of SubmitBatch: Err is nil when
// the job is recorded (new or, by its idempotency key, a duplicate).
type BatchResult struct {
	Submitted
	Err error
}

// SubmitBatch records many jobs in one round trip: each job is its own
// submit script, atomic on its own exactly as Submit is (record, task,
// idempotency key), and the scripts travel in one pipeline. There is no
// all-or-nothing across jobs: a crash mid-batch leaves some recorded and
// some not, which is why every job should carry an idempotency key; the
// retried batch then records the missing ones and finds the others.
//
// Items that cannot be recorded at all (a queue no worker reads) fail the
// whole call before anything is written. Otherwise the error is nil and
// each result says how its job fared; a Redis error marks every job whose
// reply was lost with an error wrapping jobs.ErrUnavailable.
func (s *Store) SubmitBatch(ctx context.Context, items []BatchItem) ([]BatchResult, error) {
	now := s.opts.Now()
	calls := make([]submitCall, len(items))
	errs := make([]error, len(items))
	// Encoding the specs is most of the client's share: spread it over the
	// cores. Queues are published first so the goroutines find them set.
	for _, it := range items {
		if it.Queue.Valid() && !s.opts.SeparateEnqueue {
			if err := s.publishQueue(ctx, s.ns.AsynqQueue(it.Queue)); err != nil {
				return nil, err
			}
		}
	}
	parts := min(runtime.GOMAXPROCS(0), 1+len(items)/256)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			for i := p; i < len(items); i += parts {
				calls[i], errs[i] = s.prepareSubmit(ctx, items[i].Spec, items[i].Queue, now)
			}
		})
	}
	wg.Wait()
	var problems []*jobs.FieldError
	for i, err := range errs {
		if err == nil {
			continue
		}
		var ve *jobs.ValidationError
		if !errors.As(err, &ve) {
			return nil, err
		}
		problems = append(problems, jobs.Indexed(i, err)...)
	}
	if len(problems) > 0 {
		return nil, &jobs.ValidationError{Problems: problems}
	}
	replies, err := s.runSubmits(ctx, calls)
	if err != nil {
		return nil, err
	}
	out := make([]BatchResult, len(items))
	for i, r := range replies {
		if r.err != nil {
			out[i].Err = wrap("queues.SubmitBatch", r.err)
			continue
		}
		out[i].Submitted, out[i].Err = s.submitted(ctx, calls[i], r.res)
	}
	return out, nil
}

type submitReply struct {
	res []string
	err error
}

// runSubmits runs the submit script of every call in one pipeline. Scripts
// run by SHA; a Redis that does not hold the script (restarted, flushed)
// answers NOSCRIPT without running it, so those calls are sent once more
// after the script is loaded, and nothing runs twice.
func (s *Store) runSubmits(ctx context.Context, calls []submitCall) ([]submitReply, error) {
	out := make([]submitReply, len(calls))
	todo := make([]int, len(calls))
	for i := range calls {
		todo[i] = i
	}
	for round := 0; round < 2 && len(todo) > 0; round++ {
		cmds := make([]*redis.Cmd, len(todo))
		_, _ = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for k, i := range todo {
				cmds[k] = submitScript.EvalSha(ctx, p, calls[i].keys, calls[i].args...)
			}
			return nil
		})
		var again []int
		for k, i := range todo {
			res, err := cmds[k].StringSlice()
			if err != nil && round == 0 && strings.HasPrefix(err.Error(), "NOSCRIPT") {
				again = append(again, i)
				continue
			}
			out[i] = submitReply{res: res, err: err}
		}
		if len(again) > 0 {
			if err := submitScript.Load(ctx, s.rdb).Err(); err != nil {
				return nil, wrap("queues.SubmitBatch", err)
			}
		}
		todo = again
	}
	for i := range out {
		if out[i].res == nil && out[i].err == nil {
			out[i].err = fmt.Errorf("no reply to the submit of job %s", calls[i].job.ID)
		}
	}
	return out, nil
}
