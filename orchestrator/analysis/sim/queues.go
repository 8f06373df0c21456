package sim

import (
	"container/heap"
	"time"
)

// queueKind is the policy queue a task waits in.
type queueKind uint8

const (
	qCore queueKind = iota
	qLoan
	qBurst
	qOverflow
	// qHeld holds core tasks under team shares until rule 9 admits them
	// to core; no worker reads it.
	qHeld
)

// queueEntry is a task's place in a queue. The order is the policy's queue
// order (readmitted tasks first, by SubmittedAt; the rest by QueuedAt, then
// SubmittedAt; then ID); task IDs are zero-padded slot numbers, so
// comparing slots compares IDs.
type queueEntry struct {
	queuedAt, submit time.Duration
	task             int32
	gen              uint32
	readmitted       bool
}

func (a queueEntry) before(b queueEntry) bool {
	if a.readmitted != b.readmitted {
		return a.readmitted
	}
	if !a.readmitted && a.queuedAt != b.queuedAt {
		return a.queuedAt < b.queuedAt
	}
	if a.submit != b.submit {
		return a.submit < b.submit
	}
	return a.task < b.task
}

// taskQueue is one queue as a min-heap in queue order. Tasks leave it
// lazily: a task moved elsewhere (a lend, a start) changes generation, and
// its stale entry is dropped when it reaches the top or when stale entries
// outnumber live ones, so a queue that nobody consumes (burst without
// elastic pools) does not grow without bound.
type taskQueue struct {
	heapItems[queueEntry]
	live int
}

func (q *taskQueue) Less(i, j int) bool { return q.items[i].before(q.items[j]) }

func (q *taskQueue) add(e queueEntry) {
	q.items = append(q.items, e)
	heap.Fix(q, len(q.items)-1)
	q.live++
}

// left records that a task in the queue moved on; its entry goes stale.
func (q *taskQueue) left(valid func(queueEntry) bool) {
	q.live--
	if stale := len(q.items) - q.live; stale > 1024 && stale > q.live {
		q.items = compact(q.items, valid)
		heap.Init(q)
	}
}

func compact(items []queueEntry, valid func(queueEntry) bool) []queueEntry {
	out := items[:0]
	for _, e := range items {
		if valid(e) {
			out = append(out, e)
		}
	}
	return out
}

// head returns the first live entry, dropping stale ones on the way.
func (q *taskQueue) head(valid func(queueEntry) bool) (queueEntry, bool) {
	for len(q.items) > 0 {
		if e := q.items[0]; valid(e) {
			return e, true
		}
		n := len(q.items) - 1
		q.items[0] = q.items[n]
		q.items = q.items[:n]
		if n > 0 {
			heap.Fix(q, 0)
		}
	}
	return queueEntry{}, false
}
