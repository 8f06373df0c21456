package events

import (
	"encoding/json"
	"fmt"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Keys of a job.queued event's Data that carry the job's spec, so that a
// job whose record Redis lost can be rebuilt from the stream.
const (
	// DataSpec holds the resolved spec as JSON (idempotency key included).
	DataSpec = "spec"
	// DataSpecOmitted says why the spec is not there.
	DataSpecOmitted = "spec_omitted"
)

// MaxSpecInEvent bounds the spec a job.queued event carries. A NATS
// message is at most 1 MB by default; a submission is at most
// jobs.MaxSubmissionBytes, so only a template that adds a great deal (a
// long command, many labels) comes near this.
const MaxSpecInEvent = 256 << 10

// QueuedSpec returns the spec a job.queued event carries. ok is false for
// an event without one: published before events carried specs, or with
// the spec left out (DataSpecOmitted says why).
func QueuedSpec(e Event) (spec jobs.Spec, ok bool, err error) {
	raw, has := e.Data[DataSpec]
	if !has || raw == nil {
		return jobs.Spec{}, false, nil
	}
	// A decoded event holds the spec as a map; re-encoding it is cheap
	// next to rebuilding a job, which is the only reader.
	body, err := json.Marshal(raw)
	if err != nil {
		return jobs.Spec{}, false, fmt.Errorf("events.QueuedSpec %s: %w", e.JobID, err)
	}
	if err := json.Unmarshal(body, &spec); err != nil {
		return jobs.Spec{}, false, fmt.Errorf("events.QueuedSpec %s: %w", e.JobID, err)
	}
	return spec, true, nil
}

// The Data keys of a job.queued event that readers group by.
const (
	queuedTemplate = "template"
	queuedClass    = "class"
	queuedTeam     = "team"
)

// JobQueued is what a job.queued event says: the template, class and team
// readers group by, and the job's spec as JSON, or why it was left out.
type JobQueued struct {
	Template string
	Class    string
	Team     string
	// Spec is the resolved spec as JSON; ignored when SpecOmitted is set.
	Spec json.RawMessage
	// SpecOmitted says why the event carries no spec.
	SpecOmitted string
}

// Data is q as a job.queued event's Data.
func (q JobQueued) Data() map[string]any {
	d := map[string]any{queuedTemplate: q.Template, queuedClass: q.Class, queuedTeam: q.Team}
	switch {
	case q.SpecOmitted != "":
		d[DataSpecOmitted] = q.SpecOmitted
	case q.Spec != nil:
		d[DataSpec] = q.Spec
	}
	return d
}

// QueuedSpecOmitted is why a job.queued event carries no spec, "" when it
// does not say (it carries one, or predates specs in events).
func QueuedSpecOmitted(e Event) string {
	why, _ := e.Data[DataSpecOmitted].(string)
	return why
}

// ParseJobQueued reads the grouping fields and the omission note of a
// job.queued event back (the spec itself is read by QueuedSpec); false for
// any other type.
func ParseJobQueued(e Event) (JobQueued, bool) {
	if e.Type != TypeJobQueued {
		return JobQueued{}, false
	}
	q := JobQueued{SpecOmitted: QueuedSpecOmitted(e)}
	q.Template, _ = e.Data[queuedTemplate].(string)
	q.Class, _ = e.Data[queuedClass].(string)
	q.Team, _ = e.Data[queuedTeam].(string)
	return q, true
}
