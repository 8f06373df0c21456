package events

import (
	"strconv"
	"time"
)

// TypeJobOverflowed: rule 7 moved a queued core job that had waited its
// allowed delay for fixed quota to on-demand capacity. It is published on the
// job's subject (a "job." type); Overflow gives its data one typed home.
const TypeJobOverflowed Type = "job.overflowed"

// The Data keys of a job.overflowed event, written by Overflow.Event and
// read by ParseOverflow only.
const (
	overflowPool   = "pool"
	overflowWaited = "waited_seconds"
	overflowClass  = "class"
)

// Overflow is what a job.overflowed event says: which attempt of which job
// went to which queue, for which on-demand pool, after how long a wait.
type Overflow struct {
	JobID string
	// Attempt is the new attempt, queued in Queue.
	Attempt int
	Queue   string
	// Pool is the on-demand pool the policy sized for the job; any
	// on-demand worker of its region may run it.
	Pool   string
	Waited time.Duration
	Reason string
	Time   time.Time
}

// Event renders o. Its ID derives from the job and attempt, so publishing it
// again after a retry is stored once.
func (o Overflow) Event() Event {
	return Event{
		ID: o.JobID + "." + strconv.Itoa(o.Attempt) + "." + string(TypeJobOverflowed), Type: TypeJobOverflowed,
		JobID: o.JobID, Attempt: o.Attempt, Queue: o.Queue, Reason: o.Reason, Time: o.Time,
		Data: map[string]any{overflowPool: o.Pool, overflowWaited: o.Waited.Seconds(), overflowClass: "core"},
	}
}

// ParseOverflow reads a job.overflowed event back; false for any other type.
// It accepts the event as decoded from JSON (numbers as float64).
func ParseOverflow(e Event) (Overflow, bool) {
	if e.Type != TypeJobOverflowed {
		return Overflow{}, false
	}
	pool, _ := e.Data[overflowPool].(string)
	secs, _ := e.Data[overflowWaited].(float64)
	return Overflow{JobID: e.JobID, Attempt: e.Attempt, Queue: e.Queue, Pool: pool,
		Waited: time.Duration(secs * float64(time.Second)), Reason: e.Reason, Time: e.Time}, true
}
