package workers

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// A worker remembers how its recent attempts ended, so that an end Redis
// lost (a failover promoted a replica that never received it) is recorded
// again rather than run again: see queues/unrecorded.go. Only ends are
// remembered. A requeue that was lost (a drain, a preemption, a retry)
// leaves the attempt running on record, and requeuing it as unrecorded
// does what the lost requeue did, less its checkpoint and reason.

const (
	// endedKeep is how long an end is remembered: a beat names an attempt
	// orphanGrace after its claim at the earliest, and a Sentinel failover
	// takes tens of seconds, during which no beat gets through.
	endedKeep = 10 * time.Minute
	// endedMax bounds the memory (about 200 bytes an end): at 100 ends a
	// second, ten minutes' worth. A worker that ends attempts faster keeps
	// less time, and an end lost beyond it runs again.
	endedMax = 1 << 16
)

// endedLog is the ends recorded in the last endedKeep, at most endedMax,
// by attempt: a gang's members on this worker share one.
type endedLog struct {
	mu    sync.Mutex
	by    map[attemptKey][]queues.Ended
	order []attemptKey // oldest first, one per end
	at    []time.Time
}

// attemptKey names an attempt without building a string: every take and
// every end looks one up.
type attemptKey struct {
	job     string
	attempt int
}

func newEndedLog() *endedLog { return &endedLog{by: map[attemptKey][]queues.Ended{}} }

// endedErrorMax bounds an end's error message as remembered, so that
// endedMax bounds the memory: a failure's message may be long.
const endedErrorMax = 512

// add remembers e, recorded at e.At, and forgets what is too old or too
// many. An error message is kept to its first endedErrorMax bytes: an end
// recorded again says less, but is not run again.
func (l *endedLog) add(e queues.Ended) {
	if len(e.Error) > endedErrorMax {
		e.Error = strings.ToValidUTF8(e.Error[:endedErrorMax], "") + " [cut]"
	}
	key := attemptKey{e.JobID, e.Attempt}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.by[key] = append(l.by[key], e)
	l.order = append(l.order, key)
	l.at = append(l.at, e.At)
	drop := 0
	for drop < len(l.order) && (len(l.order)-drop > endedMax || e.At.Sub(l.at[drop]) > endedKeep) {
		k := l.order[drop]
		if ends := l.by[k]; len(ends) > 1 {
			l.by[k] = ends[1:]
		} else {
			delete(l.by, k)
		}
		drop++
	}
	// The front dropped is freed when append next grows the slices.
	l.order, l.at = l.order[drop:], l.at[drop:]
}

// ends returns the remembered ends of attempt d (several for the members
// of one gang), or none.
func (l *endedLog) ends(d queues.Delivery) []queues.Ended {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]queues.Ended(nil), l.by[attemptKey{d.JobID, d.Attempt}]...)
}

// runs reports whether attempt d runs in this process, or is a gang
// member this process is claiming or waiting to start (assemble).
func (w *Worker) runs(d queues.Delivery) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.assembling[attemptKey{d.JobID, d.Attempt}] > 0 {
		return true
	}
	for _, r := range w.jobs {
		if r.job.ID == d.JobID && r.job.Attempt == d.Attempt {
			return true
		}
	}
	return false
}

// assemble notes that a member of gang attempt d is being claimed here,
// until the returned func is called. A member waits, claimed, for the rest
// of its gang before it is enlisted: were its checks of the gang's start
// failing past the grace while beats get through, the beats would name it
// and this worker would say it runs no member of the gang.
func (w *Worker) assemble(d queues.Delivery) func() {
	k := attemptKey{d.JobID, d.Attempt}
	w.mu.Lock()
	if w.assembling == nil {
		w.assembling = map[attemptKey]int{}
	}
	w.assembling[k]++
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		if w.assembling[k]--; w.assembling[k] <= 0 {
			delete(w.assembling, k)
		}
		w.mu.Unlock()
	}
}

// repairInBackground runs repairUnrecorded off the heartbeat loop, one at
// a time: after a failover a repair makes a round trip or more per attempt,
// and beats that waited for it could let the worker be declared dead. A
// beat while one runs leaves its attempts to a later beat.
func (w *Worker) repairInBackground(ctx context.Context, attempts []queues.Delivery) {
	if !w.repairing.CompareAndSwap(false, true) {
		return
	}
	w.repairs.Add(1)
	go func() {
		defer w.repairs.Done()
		defer w.repairing.Store(false)
		w.repairUnrecorded(ctx, attempts)
	}()
}

// noteUnreadable remembers a job taken whose record cannot be read: it is
// on record here, and not run, until this worker stops (Leave requeues
// it); the beats name it, and requeuing it anew would fail to enqueue it
// every time.
func (w *Worker) noteUnreadable(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.unreadableIDs == nil {
		w.unreadableIDs = map[string]bool{}
	}
	w.unreadableIDs[id] = true
}

func (w *Worker) unreadable(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.unreadableIDs[id]
}

// repairUnrecorded acts on the attempts a beat named as on record here but
// not run here: it records again the end of those this process ended, and
// requeues the others (a gang's once no member's worker runs it, see
// queues.Store.RequeueUnrecorded). One that runs here by now (a delivery
// claimed since the beat) is left alone. Errors are logged: the next beat
// names what is still unrepaired.
func (w *Worker) repairUnrecorded(ctx context.Context, attempts []queues.Delivery) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var never []queues.Delivery
	for _, d := range attempts {
		if w.runs(d) || w.unreadable(d.JobID) {
			continue
		}
		ends := w.ended.ends(d)
		if d.Members > 1 || len(ends) == 0 {
			// A gang's member this worker ended says nothing of its other
			// members here (two may share a worker): after its end is
			// recorded again the gang still goes to the check across
			// members, which counts an ended member as run nowhere, and
			// does nothing once the gang is over.
			never = append(never, d)
		}
		for _, e := range ends {
			ok, err := w.attempts.Refinish(ctx, e)
			switch {
			case err != nil:
				w.log.Warn("could not record again an end Redis lost", "job", e.JobID, "attempt", e.Attempt, "err", err)
				return
			case ok:
				w.log.Warn("recorded again how an attempt ended: Redis had lost it (a failover?)",
					"job", e.JobID, "attempt", e.Attempt, "state", e.State, "ended", e.At)
			}
		}
	}
	if len(never) == 0 {
		return
	}
	rs, err := w.attempts.RequeueUnrecorded(ctx, w.info(), never)
	if err != nil {
		w.log.Warn("could not requeue attempts on record here that this process does not run", "err", err)
		return
	}
	// A gang not requeued yet waits for its other members' workers, which
	// is expected for a few seconds (a hand-over to member 0 in progress,
	// or another member's end recorded again): nothing to say until it is.
	w.requeuedFor(rs, "requeued a job on record as running here that this process does not run", "its worker did not run it")
}

// endedAlready reports whether this process already ended attempt j under
// identity wid, which it has just claimed. A claim of one's own running
// attempt is repeatable (its reply may have been lost), and a take claims
// a queued one, so when Redis lost the end (and the claim) a delivery of
// the attempt would run it twice. It is not run: its end is recorded again
// (Refinish) instead. The error is Refinish's: the attempt is then on
// record here, and a beat names it until its end is recorded.
func (w *Worker) endedAlready(ctx context.Context, j jobs.Job, wid string) (bool, error) {
	for _, e := range w.ended.ends(queues.Delivery{JobID: j.ID, Attempt: j.Attempt}) {
		if e.Member == -1 && e.Worker == wid {
			ok, err := w.attempts.Refinish(ctx, e)
			w.log.Warn("a delivery of an attempt this worker ended: not run again", "job", j.ID, "attempt", j.Attempt,
				"end_recorded_again", ok, "err", err)
			return true, err
		}
	}
	return false, nil
}
