package usage

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// AttemptUsage is one attempt of a job on a worker: when it waited, ran and
// ended, where, and how much of its work a preemption threw away.
type AttemptUsage struct {
	JobID    string `json:"job"`
	Attempt  int    `json:"attempt"`
	Team     string `json:"team"`
	Template string `json:"template"`
	Class    string `json:"class"`
	// Pool is the pool of the worker that ran the attempt; empty for an
	// attempt claimed before workers reported their pool.
	Pool   string `json:"pool"`
	Worker string `json:"worker"`
	// Queued is when this attempt could first start: its submission or
	// requeue, or the end of its retry back-off if that came later.
	Queued time.Time `json:"queued"`
	Start  time.Time `json:"start"`
	// End is zero for an attempt still running.
	End time.Time `json:"end,omitzero"`
	// Lost is the work since the last checkpoint that a preemption, a
	// drain or a lost worker threw away.
	Lost time.Duration `json:"lost"`
	// Slots is how many slots the attempt held: every member's of a gang
	// (replicas x slots). 1 for an entry written before slots were
	// recorded.
	Slots int `json:"slots"`
	// Share, when > 0, is the thousandths of one GPU the attempt used
	// (gpu_share) on its one slot: it is billed and counted at that part.
	Share int `json:"share,omitempty"`
	// Outcome is succeeded, failed or cancelled (the job ended), preempted,
	// requeued (drained), retried (failed, to run again) or lost (its
	// worker died); "running" for an attempt still running.
	Outcome string `json:"outcome"`
}

// Wait is how long the attempt waited for a slot.
func (u AttemptUsage) Wait() time.Duration { return u.Start.Sub(u.Queued) }

// entry is a usage entry as the kernel's scripts write it (usageLua in
// queues): times in Unix ms.
type entry struct {
	Job      string `json:"job"`
	Attempt  int    `json:"attempt"`
	Queued   int64  `json:"queued"`
	Start    int64  `json:"start"`
	End      int64  `json:"end"`
	Lost     int64  `json:"lost"`
	Pool     string `json:"pool"`
	Worker   string `json:"worker"`
	Team     string `json:"team"`
	Template string `json:"template"`
	Class    string `json:"class"`
	Outcome  string `json:"outcome"`
	Slots    int    `json:"slots"`
}

// page is how many usage entries one read returns: a month of records is
// read in many short calls, so Redis never spends long on one reply while
// workers wait to heartbeat.
var page = int64(5000)

// Usage returns the attempts that ran at some time in [from, until): those
// that ended in it or later and started before until, then the attempts
// of active running now (End zero) that started before until. Ended
// attempts come oldest end first.
//
// active must be the active jobs read (queues.Store.ActiveJobs) before
// this call: an attempt that ends during the read is then found ended, or
// running (and, ended by then, left out of the running ones), never in
// neither. One found both ways counts ended.
func (s *Store) Usage(ctx context.Context, active []jobs.Job, from, until time.Time) ([]AttemptUsage, error) {
	var out []AttemptUsage
	ended := map[string]bool{}
	min, skip := strconv.FormatInt(from.UnixMilli(), 10), int64(0)
	for {
		zs, err := s.k.Redis().ZRangeByScoreWithScores(ctx, s.k.Namespace().Usage(), &redis.ZRangeBy{
			Min: min, Max: "+inf", Offset: skip, Count: page}).Result()
		if err != nil {
			return nil, queues.Wrap("usage.Usage", err)
		}
		for _, z := range zs {
			var e entry
			if json.Unmarshal([]byte(z.Member.(string)), &e) != nil {
				continue // not ours to read; never written by these scripts
			}
			u := e.attempt()
			ended[queues.TaskID(u.JobID, u.Attempt)] = true
			if u.Start.Before(until) && u.End.After(from) {
				out = append(out, u)
			}
		}
		if int64(len(zs)) < page {
			break
		}
		// The next page starts at the last score read, past the members
		// of that score already read.
		last := zs[len(zs)-1].Score
		n := int64(0)
		for i := len(zs) - 1; i >= 0 && zs[i].Score == last; i-- {
			n++
		}
		if next := strconv.FormatFloat(last, 'f', -1, 64); next == min {
			skip += n
		} else {
			min, skip = next, n
		}
	}
	for _, j := range active {
		if j.State != jobs.StateRunning || j.StartedAt.IsZero() || !j.StartedAt.Before(until) || ended[queues.TaskID(j.ID, j.Attempt)] {
			continue
		}
		out = append(out, RunningUsage(j))
	}
	return out, nil
}

// RunningUsage is the usage of j's running attempt so far.
func RunningUsage(j jobs.Job) AttemptUsage {
	return AttemptUsage{JobID: j.ID, Attempt: j.Attempt, Team: j.Spec.Team, Template: j.Spec.Template,
		Class: string(j.Spec.Class), Pool: j.Pool, Worker: j.Worker, Queued: j.EligibleAt(), Start: j.StartedAt,
		Outcome: "running", Slots: j.Spec.TotalSlots(), Share: j.Spec.ShareMilli()}
}

// attempt is what an ended attempt's usage entry says, read the same way
// for a window (Usage) and for one job's attempts page (JobUsage), so a
// GPU share is counted at its part on both.
func (e entry) attempt() AttemptUsage {
	u := AttemptUsage{JobID: e.Job, Attempt: e.Attempt, Team: e.Team, Template: e.Template, Class: e.Class,
		Pool: e.Pool, Worker: e.Worker, Queued: msUTC(e.Queued), Start: msUTC(e.Start), End: msUTC(e.End),
		Lost: time.Duration(e.Lost) * time.Millisecond, Outcome: e.Outcome}
	u.Slots, u.Share = size(e.Slots)
	return u
}

// size reads a usage entry's slots, which the kernel copies from the job
// record's "tslots" (see usageSlots in queues): at least one slot, and the
// share of a GPU, in thousandths, when the number is negative.
func size(n int) (slots, share int) {
	if n < 0 {
		return 1, min(-n, 999)
	}
	return max(n, 1), 0
}
