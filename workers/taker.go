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
// (queues.Store.Take), and runs each in a goroutine of its own. It stands
// in for asynq's server on the shared queues: it polls them as that server
// does (every poll interval while they are empty, at once while they are
// not), and forwards their due scheduled and retry tasks as that server's
// forwarder does. The record is what asynq's lease was for; see
// queues/take.go for why nothing is lost or run twice.
type taker struct {
	w      *Worker
	cancel context.CancelFunc
	loop   chan struct{} // closed when the loop has returned
	runs   sync.WaitGroup
}

// forwardEvery is how often the taker forwards due scheduled and retry
// tasks: half the retry back-off, between 100 ms and 5 s, as the shared
// asynq server looked for them.
func forwardEvery(backoff time.Duration) time.Duration {
	return min(max(backoff/2, 100*time.Millisecond), 5*time.Second)
}

// start starts the loop.
func (t *taker) start() {
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel, t.loop = cancel, make(chan struct{})
	go func() {
		defer close(t.loop)
		t.run(ctx)
	}()
}

// stop stops taking and returns once no take is in flight: every attempt
// taken is then enlisted, so the drain sees it.
func (t *taker) stop() {
	if t.cancel == nil {
		return
	}
	t.cancel()
	<-t.loop
}

// wait returns when every taken attempt has ended here.
func (t *taker) wait() { t.runs.Wait() }

func (t *taker) run(ctx context.Context) {
	w := t.w
	poll, every := w.opts.PollInterval, forwardEvery(w.opts.RetryBackoff)
	var forwarded time.Time
	failures := 0
	token := randomHex(8)
	for ctx.Err() == nil {
		keys, err := w.slots.admitTake(ctx, maxTake)
		if err != nil {
			return // stopping
		}
		if time.Since(forwarded) >= every {
			if _, err := w.store.ForwardDue(ctx, w.opts.Queues); err != nil && ctx.Err() == nil {
				w.log.Warn("forwarding due retries failed; retrying", "err", err)
			} else {
				forwarded = time.Now()
			}
		}
		took, err := w.takeInto(keys, token, failures > 0)
		switch {
		case errors.Is(err, queues.ErrFenced):
			// This identity is not the worker's any more: take a new one.
			w.refence("take")
			failures, token = 0, randomHex(8)
			continue
		case err != nil:
			// Redis trouble: nothing was taken, or the reply was lost. The
			// retry, under the same token, is answered with what this try
			// took. A worker that stops first leaves it to its
			// deregistration, which requeues whatever is on record as its.
			failures++
			w.log.Warn("taking deliveries failed; retrying", "err", err, "failures", failures)
			sleep(ctx, min(time.Duration(failures)*poll*4, 2*time.Second))
			continue
		}
		failures, token = 0, randomHex(8)
		if took == 0 {
			sleep(ctx, poll)
		}
	}
}

// takeInto takes up to len(keys) deliveries, one into each slot keys
// holds, starts them, and releases the slots left over. It returns how
// many it started. The take is not cut short when the worker stops: what
// it took is enlisted before the taker's loop returns, so the drain sees
// it.
func (w *Worker) takeInto(keys []string, token string, retry bool) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), takeTimeout)
	defer cancel()
	wid := w.ID()
	took, err := w.store.Take(ctx, queues.TakeRequest{Queues: w.opts.Queues,
		Claimant: queues.Claimant{Worker: wid, Incarnation: w.inc, Pool: w.opts.Pool},
		Max:      len(keys), Token: token, Retry: retry})
	for _, id := range took.Unreadable {
		w.log.Error("took a job whose record cannot be read; not running it (it is requeued when this worker stops)", "job", id)
	}
	if took.Dropped > 0 {
		w.log.Debug("dropped stale deliveries", "count", took.Dropped)
	}
	for i, j := range took.Jobs {
		r, key := w.enlist(j, wid, 1, nil, 0)
		if r == nil { // cannot be: a take claims only queued attempts
			if i < len(keys) {
				w.slots.release(keys[i])
			}
			continue
		}
		if i < len(keys) {
			w.slots.rekey(keys[i], key)
		} else {
			w.slots.hold(key) // a retry answered with more than it asked for
		}
		w.srv.taker.runs.Add(1)
		go func() {
			defer w.srv.taker.runs.Done()
			defer w.slots.release(key)
			w.carry(context.Background(), r, key, wid)
		}()
	}
	for _, k := range keys[min(len(took.Jobs), len(keys)):] {
		w.slots.release(k)
	}
	return len(took.Jobs), err
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
