package insight

import (
	"fmt"
	"sort"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues/usage"
)

// JobAttempts is a job's history attempt by attempt. It separates what a
// user counts, the runs that started, from the fencing counter, the
// deliveries: a job lent to fixed capacity before it ran has two
// deliveries and one run.
type JobAttempts struct {
	JobID string `json:"job"`
	// Runs counts the attempts that started on a worker.
	Runs int `json:"runs"`
	// Deliveries is the record's attempt number: every queueing counts,
	// moves of a waiting job included.
	Deliveries int       `json:"deliveries"`
	Attempts   []Attempt `json:"attempts"`
	// Cost is the sum of the attempts' cost.
	Cost float64 `json:"cost"`
	// Reasons says where the reasons came from, or why some are missing
	// (the event stream unreachable, or its events aged out).
	Reasons string `json:"reasons,omitempty"`
}

// Attempt is one delivery: why it was queued, where it ran if it did, and
// how it ended.
type Attempt struct {
	Attempt int    `json:"attempt"`
	Queue   string `json:"queue,omitempty"`
	// Began says why the attempt was queued: submitted, lent, requeued
	// after a spot notice, retried after an exit code, ...
	Began string `json:"began"`
	// Ran is true when a worker started it; Pool, Worker, Start, End,
	// Slots and Cost are set only then.
	Ran    bool      `json:"ran"`
	Pool   string    `json:"pool,omitempty"`
	Worker string    `json:"worker,omitempty"`
	Start  time.Time `json:"start,omitzero"`
	End    time.Time `json:"end,omitzero"`
	Slots  int       `json:"slots,omitempty"`
	// Share is the thousandths of one GPU a gpu_share attempt used: it
	// is billed at that part of its slot.
	Share int `json:"share,omitempty"`
	// Seconds is how long it ran (until now while running).
	Seconds float64 `json:"seconds,omitempty"`
	// Cost is Seconds × Slots (or the share of one) at the pool's price
	// per slot-hour, unrounded.
	Cost float64 `json:"cost"`
	// LostSeconds is the work since the last checkpoint a preemption threw away.
	LostSeconds float64 `json:"lost_seconds,omitempty"`
	// Outcome is how it ended: succeeded, failed, cancelled, preempted,
	// requeued, retried, lost, moved (before it ran), running or queued.
	Outcome string `json:"outcome"`
	// Reason says why it ended as it did, when known.
	Reason   string `json:"reason,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
}

// BuildAttempts puts a job's history together from its record (the
// truth about the current attempt), its usage entries (the truth about
// each attempt that ran, written when it ended) and its events (the
// reasons, which only the event stream keeps). prices maps a pool to its
// price per slot-hour. A missing event leaves a reason empty, never an
// attempt out.
func BuildAttempts(j jobs.Job, attempts []usage.AttemptUsage, evs []events.Event, prices map[string]float64, now time.Time) JobAttempts {
	out := JobAttempts{JobID: j.ID, Deliveries: j.Attempt}
	ran := map[int]usage.AttemptUsage{}
	for _, u := range attempts {
		if u.JobID == j.ID {
			ran[u.Attempt] = u
		}
	}
	began := map[int]events.Event{} // the event that queued attempt n
	ended := map[int]events.Event{} // the terminal event of attempt n
	queued := map[int]string{}
	for _, e := range evs {
		switch e.Type {
		case events.TypeJobQueued, events.TypeJobRequeued, events.TypeJobMoved, events.TypeJobOverflowed:
			began[e.Attempt] = e
			queued[e.Attempt] = e.Queue
		case events.TypeJobSucceeded, events.TypeJobFailed, events.TypeJobCancelled:
			ended[e.Attempt] = e
		case events.TypeJobRunning:
			if _, ok := queued[e.Attempt]; !ok {
				queued[e.Attempt] = e.Queue
			}
		}
	}
	for n := 1; n <= j.Attempt; n++ {
		a := Attempt{Attempt: n, Queue: queued[n], Began: beganText(n, began[n])}
		if n == j.Attempt {
			a.Queue = j.Queue
		}
		if u, ok := ran[n]; ok {
			a.Ran, a.Pool, a.Worker, a.Start, a.End, a.Slots, a.Share, a.Outcome = true, u.Pool, u.Worker, u.Start, u.End, u.Slots, u.Share, u.Outcome
			a.LostSeconds = u.Lost.Seconds()
		} else if n == j.Attempt && j.State == jobs.StateRunning {
			a.Ran, a.Pool, a.Worker, a.Start, a.Outcome, a.Slots, a.Share = true, j.Pool, j.Worker, j.StartedAt, "running", j.Spec.Size.TotalSlots(), j.Spec.ShareMilli()
		}
		switch {
		case a.Ran:
			end := a.End
			if end.IsZero() {
				end = now
			}
			a.Seconds = max(0, end.Sub(a.Start).Seconds())
			a.Cost = a.Seconds / 3600 * a.gpus() * prices[a.Pool]
			out.Runs++
			out.Cost += a.Cost
		case n < j.Attempt:
			a.Outcome = "moved"
		case j.State == jobs.StateQueued:
			a.Outcome = "queued"
		default: // ended without running: cancelled while queued, say
			a.Outcome = string(j.State)
		}
		// Why it ended: the event that queued the next attempt, or the
		// job's end.
		if nx, ok := began[n+1]; ok && n < j.Attempt {
			a.Reason = nx.Reason
		} else if e, ok := ended[n]; ok {
			a.Reason = e.Reason
			if x, ok := events.ParseJobEnd(e); ok && x.ExitCode != nil {
				a.ExitCode = x.ExitCode
			}
		}
		if n == j.Attempt && j.State.Terminal() {
			if a.ExitCode == nil {
				a.ExitCode = j.ExitCode
			}
			if a.Reason == "" {
				a.Reason = j.LastError
			}
		}
		out.Attempts = append(out.Attempts, a)
	}
	sort.Slice(out.Attempts, func(x, y int) bool { return out.Attempts[x].Attempt < out.Attempts[y].Attempt })
	// The record counts runs where they start; usage entries can age out
	// or be lost, so it decides when it has the counter (records written
	// before the counter existed do not).
	if j.Runs > 0 {
		out.Runs = j.Runs
	}
	return out
}

// beganText says why attempt n was queued, from the event that did it.
func beganText(n int, e events.Event) string {
	switch {
	case e.Type == events.TypeJobQueued || (n == 1 && e.Type == ""):
		return "submitted"
	case e.Type == "":
		return "queued again (no event kept)"
	case e.Type == events.TypeJobOverflowed:
		return "overflowed to on-demand: " + e.Reason
	case e.Reason != "":
		return fmt.Sprintf("%s: %s", verbOf(e.Type), e.Reason)
	}
	return verbOf(e.Type)
}

func verbOf(t events.Type) string {
	if t == events.TypeJobMoved {
		return "moved"
	}
	return "requeued"
}

// gpus is what the attempt used: at least one slot, or its share of one.
func (a Attempt) gpus() float64 { return jobs.SlotsUsed(max(1, a.Slots), a.Share) }
