package sim

import (
	"container/heap"
	"time"
)

// never is a time that does not come.
const never = time.Duration(1<<63 - 1)

// eventKind names what happens at an event.
type eventKind uint8

const (
	// evFinish: a task's attempt has done all its remaining work.
	evFinish eventKind = iota
	// evLand: a stopped task has wound down and is requeued.
	evLand
	// evBoot: a launch has become workers.
	evBoot
	// evSpotReclaim: the provider takes a spot worker back.
	evSpotReclaim
	// evCheckpoint: a running task has written a checkpoint.
	evCheckpoint
	// evDeath, evDetect, evRevive: a fixed worker dies, is declared
	// dead, registers again (deaths.go); idx is the death's.
	evDeath
	evDetect
	evRevive
)

// event is one timed happening. gen must match the task's or worker's
// current generation, so an event overtaken by a stop or a release is
// dropped when it comes up instead of being searched for and removed.
type event struct {
	at   time.Duration
	seq  uint64 // insertion order, so equal times replay deterministically
	idx  int32  // task, worker or launch index
	gen  uint32
	kind eventKind
}

// eventQueue is a min-heap of events by time, then insertion order. It
// implements heap.Interface; push and pop go through heap.Fix rather than
// heap.Push and heap.Pop, which box every event into an interface value.
// Trace arrivals do not go through it: the trace is already sorted, so the
// run merges its cursor with the heap.
type eventQueue struct {
	heapItems[event]
	seq uint64
}

func (q *eventQueue) Less(i, j int) bool {
	a, b := &q.items[i], &q.items[j]
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (q *eventQueue) push(e event) {
	q.seq++
	e.seq = q.seq
	q.items = append(q.items, e)
	heap.Fix(q, len(q.items)-1)
}

// next returns the time of the earliest event, never if there is none.
func (q *eventQueue) next() time.Duration {
	if len(q.items) == 0 {
		return never
	}
	return q.items[0].at
}

func (q *eventQueue) pop() event {
	e := q.items[0]
	n := len(q.items) - 1
	q.items[0] = q.items[n]
	q.items = q.items[:n]
	if n > 0 {
		heap.Fix(q, 0)
	}
	return e
}
