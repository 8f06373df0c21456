package controller

import (
	"encoding/json"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// queuedData is the data of a job.queued event: the template, class and
// team that readers group by, and the whole spec (idempotency key
// included), so that the event stream, which NATS keeps apart from Redis,
// can rebuild the job if Redis loses its record (see Recover). A spec
// too large for an event is left out and said so; recovery reports such
// jobs instead of guessing.
func queuedData(spec *jobs.Spec) map[string]any {
	q := events.JobQueued{Template: spec.Template, Class: string(spec.Class), Team: spec.Team}
	body, err := spec.AppendJSON(nil)
	switch {
	case err != nil:
		q.SpecOmitted = "spec not encodable: " + err.Error()
	case len(body) > events.MaxSpecInEvent:
		q.SpecOmitted = "spec larger than an event carries"
	default:
		q.Spec = json.RawMessage(body)
	}
	return q.Data()
}
