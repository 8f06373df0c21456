package workers

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ballastdev/ballast/queues"
)

// maxTake is the most deliveries one take asks for. A worker whose jobs
// end together frees many slots at once; one script fills them all, and a
// bound keeps that script short.
const maxTake = 32

// takeTimeout bounds one take's round trip.
const takeTimeout = 5 * time.Second

// taker is how a worker takes its shared deliveries where the store allows
// it (queues.Store.CanTake): one loop that waits for free slots, then
// pops and claims as many deliveries as there are slots in one script
// (queues.Store.Take), and runs each on a goroutine of its own (one kept
// from an attempt before, see carriers.go). It stands
// in for asynq's server on the shared queues: it polls them as that server
// does (every poll interval while they are empty, at once while they are
// not), and forwards their due scheduled and retry tasks as that server's
// forwarder does. The record is what asynq's lease was for; see
// queues/take.go for why nothing is lost or run twice.
type taker struct {
	w    *Worker
	runs sync.WaitGroup
	// carriers run the taken attempts, kept from one to the next.
	carriers *carriers

	mu      sync.Mutex
	stopped bool
	cancel  context.CancelFunc
	loop    chan struct{} // closed when the loop has returned; nil before start
}

// forwardEvery is how often due scheduled and retry tasks move to
// pending, by the taker or by asynq's servers: half the retry back-off,
// between 100 ms and 5 s. asynq looks every 5 s by default, which would
// stretch a short back-off to seconds.
func forwardEvery(backoff time.Duration) time.Duration {
	return min(max(backoff/2, 100*time.Millisecond), 5*time.Second)
}

// start starts the loop, unless stop came first.
func (t *taker) start() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel, t.loop = cancel, make(chan struct{})
	go func() {
		defer close(t.loop)
		t.run(ctx)
	}()
}

// stop stops taking and returns once no take is in flight: every attempt
// taken is then enlisted, so the drain sees it. A taker stopped before it
// started never starts.
func (t *taker) stop() {
	t.mu.Lock()
	t.stopped = true
	loop := t.loop
	if t.cancel != nil {
		t.cancel()
	}
	t.mu.Unlock()
	if loop != nil {
		<-loop
	}
}

// wait returns when every taken attempt has ended here, and the goroutines
// that carried them too.
func (t *taker) wait() {
	t.runs.Wait()
	t.carriers.stop()
}

// take is what the loop asks of one take: a fresh one, the retry of a
// try that failed, or only the answer to that try.
type take int

const (
	takeFresh take = iota
	takeRetry
	takeAgainOnly
)

func (t *taker) run(ctx context.Context) {
	w := t.w
	poll, every := w.opts.PollInterval, forwardEvery(w.opts.RetryBackoff)
	var forwarded time.Time
	// hold is what the book holds for the take in hand. A take that
	// failed keeps it for its retry: what its first try claimed, if it
	// did, comes back into the slots it was claimed for.
	var hold *takeHold
	failures := 0
	token := randomHex(8)
	defer func() {
		if failures > 0 {
			// A take in doubt when the worker stops taking: one last try
			// asks only for what it claimed, which then runs (or is
			// drained) here. If that fails too, Leave requeues it.
			if _, err := w.takeInto(hold, token, takeAgainOnly); err != nil {
				w.log.Warn("a take in doubt could not be settled; the worker's deregistration requeues what it took", "err", err)
				w.slots.endTake(hold)
			}
			return
		}
		if hold != nil {
			w.slots.endTake(hold)
		}
	}()
	for ctx.Err() == nil && !w.isDraining() {
		if hold == nil {
			h, err := w.slots.admitTake(ctx, maxTake)
			if err != nil {
				return // stopping
			}
			hold = &h
		}
		if w.opts.Now().Sub(forwarded) >= every {
			if _, err := w.deliveries.ForwardDue(ctx, w.opts.Queues); err != nil && ctx.Err() == nil {
				w.log.Warn("forwarding due retries failed; retrying", "err", err)
			} else {
				forwarded = w.opts.Now()
			}
		}
		if w.selfFenced() {
			// No take while the registration may lapse: what it claimed
			// would be stopped at once. A take in doubt keeps its hold and
			// token and is retried once the fence lifts; if the controller
			// recovered this worker meanwhile, that retry finds it fenced.
			sleep(ctx, poll)
			continue
		}
		mode := takeFresh
		if failures > 0 {
			mode = takeRetry
		}
		took, err := w.takeInto(hold, token, mode)
		switch {
		case errors.Is(err, queues.ErrFenced):
			// Nothing was taken, and this identity is not the worker's any
			// more: take a new one.
			hold, failures, token = nil, 0, randomHex(8)
			w.refence("take")
			continue
		case err != nil:
			// Redis trouble: nothing was taken, or the reply was lost. The
			// retry, under the same token and into the same slots, is
			// answered with what this try took.
			failures++
			w.log.Warn("taking deliveries failed; retrying", "err", err, "failures", failures)
			sleep(ctx, min(time.Duration(failures)*poll*4, 2*time.Second))
			continue
		}
		hold, failures, token = nil, 0, randomHex(8)
		if took == 0 {
			sleep(ctx, poll)
		}
	}
}

// takeInto takes what fits hold (a delivery per slot it holds, and on a
// GPU worker the jobs with GPU shares that fit its rooms too), seats and
// starts them, and ends the hold. It returns how many it started. On an
// error other than ErrFenced it keeps the hold, for the retry; every
// other way, it is ended. The take is not cut short when the worker
// stops: what it took is enlisted before the taker's loop returns, so the
// drain sees it.
func (w *Worker) takeInto(hold *takeHold, token string, mode take) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), takeTimeout)
	defer cancel()
	wid := w.ID()
	req := queues.TakeRequest{Queues: w.opts.Queues,
		Claimant: queues.Claimant{Worker: wid, Incarnation: w.inc, Pool: w.opts.Pool},
		Max:      len(hold.keys), Token: token, Retry: mode != takeFresh, AgainOnly: mode == takeAgainOnly}
	if w.gpuWorker() {
		// A job's share decides what it fits, so the take must fit them.
		fit := queues.TakeFit{Whole: len(hold.keys), Rooms: make([]int, len(hold.rooms))}
		for i, r := range hold.rooms {
			fit.Rooms[i] = r.Free
		}
		req.Fit, req.Max = &fit, maxTake
	}
	took, err := w.deliveries.Take(ctx, req)
	if err != nil && !errors.Is(err, queues.ErrFenced) {
		return 0, err
	}
	defer w.slots.endTake(hold)
	for _, id := range took.Unreadable {
		w.log.Error("took a job whose record cannot be read; not running it (it is requeued when this worker stops)", "job", id)
		w.noteUnreadable(id)
	}
	if took.Dropped > 0 {
		w.log.Debug("dropped stale deliveries", "count", took.Dropped)
	}
	started := 0
	for _, j := range took.Jobs {
		if ended, _ := w.endedAlready(ctx, j, wid); ended {
			continue // nothing is seated for it; a failed record of it is retried by the beats
		}
		r, key := w.enlist(j, wid, 1, nil, 0)
		if r == nil {
			continue // cannot be: a take claims only queued attempts
		}
		share := 0
		if w.gpuWorker() {
			share = j.Spec.ShareMilli()
		}
		if !w.slots.seat(hold, key, share) {
			// Cannot be without a GPU (a take answers with at most as
			// many as it asks), nor with one while the fit and the
			// allocator pack alike; the attempt then asks for a device of
			// its own as it starts, and fails (and retries) if none is free.
			w.log.Error("a take answered with a job that fits no slot it held", "job", j.ID, "share", share)
		}
		started++
		w.srv.taker.runs.Add(1)
		w.srv.taker.carriers.carry(func() {
			defer w.srv.taker.runs.Done()
			defer w.slots.release(key)
			w.carry(context.Background(), r, key, wid)
		})
	}
	return started, err
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
