package sim

import (
	"container/heap"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// Ticks fall on multiples of Tick from the trace start.

// tickAtOrAfter is the first tick at or after d.
func (s *sim) tickAtOrAfter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	if d > never-s.tickLen {
		return never
	}
	return (d + s.tickLen - 1) / s.tickLen * s.tickLen
}

// nextTick is the first tick at or after now that has not run yet.
func (s *sim) nextTick() time.Duration {
	t := s.tickAtOrAfter(s.now)
	if t <= s.lastTick {
		t = s.lastTick + s.tickLen
	}
	return t
}

// The wake-ups below are for a model that does not change: each is the
// first tick after now at which a timer the policy reads crosses its
// threshold. A timer already past its threshold needs none, because the
// Decide that just ran saw it, and whatever held the action back then
// (another worker's spare slots, a pool without room) is in the snapshot,
// so only a change of the model can release it.

// wakeAt lowers the wake-up to the tick of a threshold at due, unless the
// threshold is already past.
func (s *sim) wakeAt(due time.Duration) {
	if due > s.now {
		s.wake = min(s.wake, s.tickAtOrAfter(due))
	}
}

// releaseDue reports whether rule 5's timers let an idle worker go at t:
// idle for its pool's IdleTTL, and no more than ReleaseMargin of paid time
// left.
func (s *sim) releaseDue(w *worker, p *policy.Pool, t time.Duration) bool {
	return t-w.idleSince >= p.IdleTTL && s.paidLeft(w, p, t) <= s.cfg.ReleaseMargin
}

// paidLeft is how much billed time the worker has left at t.
func (s *sim) paidLeft(w *worker, p *policy.Pool, t time.Duration) time.Duration {
	return p.PaidUntil(s.at(w.requested), s.at(t)).Sub(s.at(t))
}

// wakeRelease lowers the wake-up to the first tick after now at which an
// idle up worker's release timers both hold, given they do not now. With
// per-minute or per-hour billing the paid time left is a sawtooth, so the
// search jumps from one billed unit's release window to the next; a window
// that no tick falls in is skipped, as the live controller would miss it.
func (s *sim) wakeRelease(w *worker, p *policy.Pool) {
	if s.releaseDue(w, p, s.now) {
		return
	}
	s.wakePaid(w, p, max(s.now+s.tickLen, s.tickAtOrAfter(w.idleSince+p.IdleTTL)))
}

// wakeRepack lowers the wake-up to the first tick after now at which
// rule 5's timers let it repack a busy worker's jobs, given they do not
// now: every job has run for its pool's IdleTTL, and the worker's paid
// time is used up to ReleaseMargin.
func (s *sim) wakeRepack(w *worker, p *policy.Pool) {
	youngest := time.Duration(0)
	for _, ti := range w.tasks {
		youngest = max(youngest, s.tasks[ti].startedAt)
	}
	aged := youngest + p.IdleTTL
	if aged <= s.now && s.paidLeft(w, p, s.now) <= s.cfg.ReleaseMargin {
		return
	}
	s.wakePaid(w, p, max(s.now+s.tickLen, s.tickAtOrAfter(aged)))
}

// wakePaid lowers the wake-up to the first tick at or after t at which
// the worker has no more than ReleaseMargin of paid time left.
func (s *sim) wakePaid(w *worker, p *policy.Pool, t time.Duration) {
	for range 64 {
		if t == never {
			return
		}
		left := s.paidLeft(w, p, t)
		if left <= s.cfg.ReleaseMargin {
			break
		}
		t = s.tickAtOrAfter(t + left - s.cfg.ReleaseMargin)
	}
	// After 64 missed windows, waking at the last one tried is harmless:
	// Decide plans nothing and the search goes on from there.
	s.wake = min(s.wake, t)
}

// dueQueue is a min-heap of queued core tasks by when rule 7 may move
// them (held in queueEntry.queuedAt). Entries go stale as tasks leave the
// core queue and are dropped when they reach the top.
type dueQueue struct{ heapItems[queueEntry] }

func (q *dueQueue) Less(i, j int) bool { return q.items[i].queuedAt < q.items[j].queuedAt }

func (q *dueQueue) push(e queueEntry) {
	q.items = append(q.items, e)
	heap.Fix(q, len(q.items)-1)
}

func (q *dueQueue) pop() {
	n := len(q.items) - 1
	q.items[0] = q.items[n]
	q.items = q.items[:n]
	if n > 0 {
		heap.Fix(q, 0)
	}
}
