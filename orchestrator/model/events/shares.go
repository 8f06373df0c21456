package events

import (
	"strconv"
	"time"
)

// TypeJobReclaimed: the capacity policy asked the worker running a job to
// checkpoint it and give its slots back (a reclaim). Under team shares it
// names whose share the slots go back to: Share gives its data one typed
// home. The requeue that follows is the worker's job.requeued event.
const TypeJobReclaimed Type = "job.reclaimed"

// The Data keys of share events (job.reclaimed, and job.moved for an
// admission under shares), written by Share.Data and read by ParseShare.
const (
	shareTeam  = "team"
	shareOwner = "owner"
	shareRule  = "rule"
	shareKind  = "share_action"
)

// Share is the team side of an admission or a reclaim under shares: the
// team of the job moved (for a reclaim, the borrower that loses the
// slots), the owner whose share it is about (for a reclaim, the team
// whose in-share work takes the slots back), and the policy's rule.
type Share struct {
	// Action is "admit" or "reclaim".
	Action string
	Team   string
	Owner  string
	Rule   int
}

// Data is s as an event's Data.
func (s Share) Data() map[string]any {
	return map[string]any{shareKind: s.Action, shareTeam: s.Team, shareOwner: s.Owner, shareRule: s.Rule}
}

// ParseShare reads the share data of an event, as decoded from JSON
// (numbers as float64) or as built; false when it carries none.
func ParseShare(e Event) (Share, bool) {
	kind, ok := e.Data[shareKind].(string)
	if !ok {
		return Share{}, false
	}
	s := Share{Action: kind}
	s.Team, _ = e.Data[shareTeam].(string)
	s.Owner, _ = e.Data[shareOwner].(string)
	switch r := e.Data[shareRule].(type) {
	case float64:
		s.Rule = int(r)
	case int:
		s.Rule = r
	}
	return s, true
}

// Reclaimed is the job.reclaimed event of the running attempt of job on
// worker. Its ID derives from the job and attempt, so a reclaim asked
// again for the same attempt is stored once.
func Reclaimed(job string, attempt int, worker string, s Share, reason string, at time.Time) Event {
	s.Action = "reclaim"
	return Event{ID: job + "." + strconv.Itoa(attempt) + "." + string(TypeJobReclaimed), Type: TypeJobReclaimed,
		JobID: job, Attempt: attempt, Worker: worker, Reason: reason, Time: at, Data: s.Data()}
}
