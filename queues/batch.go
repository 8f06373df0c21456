package queues

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
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

// batchChunk is how many submit scripts travel in one pipeline. One
// pipeline of a whole batch keeps Redis idle while the batch is encoded and
// the client idle while Redis runs it; chunks let the two overlap, and are
// still large enough that a round trip costs little per job.
const batchChunk = 500

// batchPipelines is how many chunks are in Redis's hands at once: while it
// runs one, the reply of the other is read, so it never waits for the next.
const batchPipelines = 2

// batchFirstChunk is the size of a batch's first chunk.
const batchFirstChunk = 100

// SubmitBatch records many jobs in few round trips: each job is its own
// submit script, atomic on its own exactly as Submit is (record, task,
// idempotency key), and the scripts travel in pipelines of a few hundred.
// There is no all-or-nothing across jobs: a crash mid-batch leaves some
// recorded and some not, which is why every job should carry an
// idempotency key; the retried batch then records the missing ones and
// finds the others.
//
// Items that cannot be recorded at all (a queue no worker reads) fail the
// whole call before anything is written. Otherwise the error is nil and
// each result says how its job fared; a Redis error marks every job whose
// reply was lost with an error wrapping jobs.ErrUnavailable.
func (s *Store) SubmitBatch(ctx context.Context, items []BatchItem) ([]BatchResult, error) {
	out := make([]BatchResult, len(items))
	if err := s.SubmitBatchEach(ctx, items, func(lo int, res []BatchResult) { copy(out[lo:], res) }); err != nil {
		return nil, err
	}
	return out, nil
}

// SubmitBatchEach is SubmitBatch handing the results over a chunk at a
// time: each gets the results of items[lo:lo+len(res)] as soon as they are
// known, so that the caller's work on them (announcing the jobs) overlaps
// with Redis recording the next ones. each is called in order, from one
// goroutine, and has returned for every item when SubmitBatchEach does. On
// an error, which comes before anything is written, each is never called.
func (s *Store) SubmitBatchEach(ctx context.Context, items []BatchItem, each func(lo int, res []BatchResult)) error {
	var problems []*jobs.FieldError
	seen := map[Queue]bool{}
	for i, it := range items {
		if err := checkQueue("queues.Submit", it.Queue, false); err != nil {
			// A queue no worker consumes (a pin to a malformed region)
			// would hold the job forever: refuse the batch first.
			problems = append(problems, &jobs.FieldError{Field: fmt.Sprintf("[%d].queue", i), Message: err.Error()})
			continue
		}
		if !seen[it.Queue] && !s.opts.SeparateEnqueue {
			seen[it.Queue] = true
			// Published once here, so that the goroutines below find it set.
			if err := s.publishQueue(ctx, s.ns.AsynqQueue(it.Queue)); err != nil {
				return err
			}
		}
	}
	if len(problems) > 0 {
		return &jobs.ValidationError{Problems: problems}
	}
	if len(items) == 0 {
		return nil
	}
	now := s.opts.Now()
	// The first chunk is small, so that Redis has work soon after the call
	// begins; the rest are full.
	var chunks []batchPart
	for lo := 0; lo < len(items); {
		hi := min(lo+batchChunk, len(items))
		if lo == 0 {
			hi = min(batchFirstChunk, len(items))
		}
		chunks = append(chunks, batchPart{lo: lo, hi: hi, prepared: make(chan struct{}), done: make(chan struct{})})
		lo = hi
	}
	n := len(chunks)
	// One preparer, a few chunks ahead of the pipelines and no more: one
	// goroutine keeps up with Redis, and preparing further ahead would
	// only take the cores from Redis and from reading its replies.
	ahead := make(chan struct{}, batchPipelines+1)
	var nextRun atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for k := range chunks {
			select {
			case ahead <- struct{}{}:
			case <-ctx.Done():
				// Prepared all the same, so that every chunk still gets its
				// results: the pipelines then fail on ctx.
			}
			chunks[k].prepare(ctx, s, items, now)
		}
	})
	for range min(batchPipelines, n) {
		wg.Go(func() {
			for k := int(nextRun.Add(1) - 1); k < n; k = int(nextRun.Add(1) - 1) {
				<-chunks[k].prepared
				select {
				case <-ahead:
				default:
				}
				chunks[k].run(ctx, s)
			}
		})
	}
	for k := range chunks {
		<-chunks[k].done
		each(chunks[k].lo, chunks[k].res)
	}
	wg.Wait()
	return nil
}

// batchPart is one chunk of a batch, items[lo:hi].
type batchPart struct {
	lo, hi   int
	calls    []submitCall
	res      []BatchResult
	prepared chan struct{} // calls and the results of items not sent are set
	done     chan struct{} // res is complete
}

func (p *batchPart) prepare(ctx context.Context, s *Store, items []BatchItem, now time.Time) {
	defer close(p.prepared)
	p.calls = make([]submitCall, p.hi-p.lo)
	p.res = make([]BatchResult, p.hi-p.lo)
	for k := range p.calls {
		it := items[p.lo+k]
		// The queues were checked, so this can fail only in encoding: the
		// job is not sent, and its result says why.
		if p.calls[k], p.res[k].Err = s.prepareSubmit(ctx, it.Spec, it.Queue, now, &p.res[k].Job); p.res[k].Err != nil {
			p.res[k].Submitted = Submitted{}
		}
	}
}

func (p *batchPart) run(ctx context.Context, s *Store) {
	defer close(p.done)
	send := make([]int, 0, len(p.calls))
	for k := range p.calls {
		if p.res[k].Err == nil {
			send = append(send, k)
		}
	}
	replies := s.runSubmitGroups(ctx, p.calls, send)
	for _, k := range send {
		r, out := replies[k], &p.res[k]
		if r.err != nil {
			// The job prepared is not recorded: the result holds none.
			out.Submitted, out.Err = Submitted{}, wrap("queues.SubmitBatch", r.err)
			continue
		}
		// A new job is the one prepare wrote into the result already.
		switch j, dup, err := s.settle(ctx, &p.calls[k], r.verdict, r.id); {
		case err != nil:
			out.Submitted, out.Err = Submitted{}, err
		case dup:
			out.Submitted = Submitted{Job: *j, Duplicate: true}
		}
	}
}

// submitReply is the script's reply for one job: its verdict ("new",
// "dup", "conflict") and the ID it names, or the error that left it
// unknown.
type submitReply struct {
	verdict, id string
	err         error
}
