package events

import "time"

// The Data keys of pipeline events, written and read in this file only.
const (
	pipeScheduled = "scheduled"
	pipeTrigger   = "trigger"
	pipeDeadline  = "deadline"
	pipeLate      = "late_seconds"
)

// PipelineRun is what a pipeline run event says besides its envelope: the
// scheduled time it is for, and (on pipeline.run.started and skipped) what
// triggered it. pipeline.missed and the ends carry the time only.
type PipelineRun struct {
	Scheduled time.Time
	// Trigger is "" on the events that do not carry one.
	Trigger string
}

// Data is r as a pipeline event's Data; the trigger is written only when
// set, as the ends and pipeline.missed never carried one.
func (r PipelineRun) Data() map[string]any {
	d := map[string]any{pipeScheduled: r.Scheduled}
	if r.Trigger != "" {
		d[pipeTrigger] = r.Trigger
	}
	return d
}

// ParsePipelineRun reads the scheduled time and trigger of a pipeline
// event; false for an event of another family.
func ParsePipelineRun(e Event) (PipelineRun, bool) {
	if !e.Type.IsPipeline() {
		return PipelineRun{}, false
	}
	r := PipelineRun{Scheduled: timeOf(e.Data[pipeScheduled])}
	r.Trigger, _ = e.Data[pipeTrigger].(string)
	return r, true
}

// PipelineDeadline is what a pipeline.deadline_missed event says.
type PipelineDeadline struct {
	Deadline  time.Time
	Scheduled time.Time
	// Late is how far past the deadline the run was when it was noticed.
	Late time.Duration
}

// Data is d as a pipeline.deadline_missed event's Data.
func (d PipelineDeadline) Data() map[string]any {
	return map[string]any{pipeDeadline: d.Deadline, pipeScheduled: d.Scheduled, pipeLate: d.Late.Seconds()}
}

// ParsePipelineDeadline reads a pipeline.deadline_missed event back; false
// for any other type.
func ParsePipelineDeadline(e Event) (PipelineDeadline, bool) {
	if e.Type != TypePipelineDeadlineMissed {
		return PipelineDeadline{}, false
	}
	return PipelineDeadline{Deadline: timeOf(e.Data[pipeDeadline]), Scheduled: timeOf(e.Data[pipeScheduled]),
		Late: time.Duration(number(e.Data[pipeLate]) * float64(time.Second))}, true
}

// timeOf reads a time from event data, as built (time.Time) or as decoded
// from JSON (an RFC 3339 string); the zero time for anything else.
func timeOf(v any) time.Time {
	switch t := v.(type) {
	case time.Time:
		return t
	case string:
		p, err := time.Parse(time.RFC3339Nano, t)
		if err == nil {
			return p
		}
	}
	return time.Time{}
}
