package events

import (
	"encoding/json"
	"fmt"

	"github.com/ballastdev/ballast/jobs"
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
