package trace

import (
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// JobOf replays a finished job record: submitted at its creation, running
// from its start to its finish, relative to start, with its size (slots
// per member, members, required labels), so a plan from history sees the
// machines its jobs need. A job that never ran or still runs has no
// duration to replay, and ok is false.
func JobOf(j jobs.Job, start time.Time) (job Job, ok bool) {
	if !j.State.Terminal() || j.StartedAt.IsZero() || !j.FinishedAt.After(j.StartedAt) {
		return Job{}, false
	}
	return Job{Submit: j.CreatedAt.Sub(start), Duration: j.FinishedAt.Sub(j.StartedAt),
		Slots: j.Spec.SlotCount(), Replicas: gangOf(j.Spec.Members()), Requires: j.Spec.Requires, Share: j.Spec.ShareMilli(),
		CPUs: j.Spec.CPUs, Memory: int64(j.Spec.Memory),
		Class: j.Spec.Class, Team: orDefault(j.Spec.Team), Template: orDefault(j.Spec.Template),
		Checkpointable: j.Spec.Checkpointable}, true
}

// orDefault names the team or template of a job that gave none, as the
// CSV format requires a value.
func orDefault(s string) string {
	if s == "" {
		return "default"
	}
	return s
}

// gangOf is Job.Replicas for a job of n members: 0 for a single job.
func gangOf(n int) int {
	if n > 1 {
		return n
	}
	return 0
}
