package workers

import (
	"context"
	"fmt"
	"time"

	"github.com/ballastdev/ballast/queues"
)

// heartbeatLoop keeps the worker in the registry and acts on what the
// registry says: cancel and preempt requests, drain and spot notice
// intents, attempts that moved on, and fencing (by the controller, or by a
// newer process under the same ID). A control message makes it beat at once.
func (w *Worker) heartbeatLoop(ctx context.Context) {
	defer close(w.hbDone)
	defer w.repairs.Wait() // a repair ends with the loop's ctx: Stop waits for it
	t := time.NewTicker(w.opts.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.beat(ctx)
		case <-w.wake:
			w.beat(ctx)
		}
	}
}

func (w *Worker) beat(ctx context.Context) {
	w.mu.Lock()
	live := make([]queues.Delivery, 0, len(w.jobs))
	// Two members of one gang may run here: a job ID names them all.
	byID := make(map[string][]*running, len(w.jobs))
	for _, r := range w.jobs {
		// Attempts claimed under an identity fenced earlier are already
		// stopping; only the current identity's attempts are reported.
		if r.worker == w.ID() {
			if len(byID[r.job.ID]) == 0 {
				live = append(live, queues.Delivery{JobID: r.job.ID, Attempt: r.job.Attempt})
			}
			byID[r.job.ID] = append(byID[r.job.ID], r)
		}
	}
	w.mu.Unlock()
	// First, so that jobs this beat finds gone are explained; on a budget
	// of its own, so that a Redis slow to answer it leaves the heartbeat
	// (which the self-fence counts on) its full two seconds.
	ectx, ecancel := context.WithTimeout(ctx, 500*time.Millisecond)
	w.watchEpoch(ectx)
	ecancel()
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	// Taken before the beat: the registry's timestamp is no earlier, so
	// the self-fence counts from no later than the controller does.
	sent := w.opts.Now()
	b, err := w.registry.Heartbeat(cctx, w.info(), live)
	if err != nil {
		w.log.Warn("heartbeat failed", "err", err)
		return
	}
	if b.Fenced {
		w.refence("heartbeat")
		return
	}
	w.renewedAt(sent)
	for _, id := range b.Cancel {
		for _, r := range byID[id] {
			r.stop(stopCancel)
		}
	}
	for _, id := range b.Preempt {
		for _, r := range byID[id] {
			// A gang is preempted by member 0, which checkpoints and
			// requeues it; the others stop when they see it moved on.
			if !r.peer() {
				r.stop(stopPreempt)
			}
		}
	}
	for _, id := range b.Lost {
		for _, r := range byID[id] {
			r.stop(stopLost)
		}
	}
	w.actOnIntents(b)
	if len(b.Unrecorded) > 0 {
		w.repairInBackground(ctx, b.Unrecorded)
	}
}

// refence handles the controller declaring this worker identity dead: its
// attempts were requeued elsewhere and may already run there, so their
// process trees are killed first, before anything else (no grace: a
// checkpoint written now could not be recorded), and the worker continues
// under a new identity. The new identity is taken in the same step so that
// a slot freed by these kills cannot claim under the fenced one.
func (w *Worker) refence(seenBy string) {
	w.mu.Lock()
	old := w.ID()
	if w.fenced[old] {
		w.mu.Unlock()
		return // another goroutine already moved on from this identity
	}
	w.fenced[old] = true
	w.id.Store(fmt.Sprintf("%s-r%s", w.opts.ID, randomHex(2)))
	w.identitySince = w.opts.Now()
	for _, r := range w.jobs {
		if r.worker == old {
			r.stop(stopLost)
			r.killNow()
		}
	}
	w.mu.Unlock()
	w.log.Warn("fenced by the controller; its jobs were requeued elsewhere: stopped them, re-registering",
		"old", old, "new", w.ID(), "seen_by", seenBy)
	if err := w.syncControl(); err != nil {
		w.log.Warn("control messages lost with the old identity; requests arrive by heartbeat", "err", err)
	}
}
