package events

import (
	"fmt"
	"strings"
)

// DefaultPrefix is the first subject token when Subjects.Prefix is empty.
const DefaultPrefix = "ballast"

// Subjects builds every NATS subject Ballast uses, so that the names live in
// one place. The zero value uses DefaultPrefix; set Prefix to run several
// installations on one NATS account.
type Subjects struct {
	Prefix string
}

func (s Subjects) prefix() string {
	if s.Prefix == "" {
		return DefaultPrefix
	}
	return s.Prefix
}

// Submit is the request-reply subject of the intake: PREFIX.jobs.submit.
func (s Subjects) Submit() string { return s.prefix() + ".jobs.submit" }

// SweepSubmit is the request-reply subject on which the intake takes
// sweeps: PREFIX.sweeps.submit. It is apart from Submit because a sweep
// has its own body (sweep.Spec), size limit and receipt.
func (s Subjects) SweepSubmit() string { return s.prefix() + ".sweeps.submit" }

// JobStatus is where a job's current record is asked for (a request whose
// body is {"job_id": ID}): followers of events poll it, so that a lost
// event cannot leave them waiting.
func (s Subjects) JobStatus() string { return s.prefix() + ".jobs.get" }

// Job is the subject of one job's events: PREFIX.events.job.ID.
func (s Subjects) Job(id string) string { return s.prefix() + ".events.job." + id }

// Worker is the subject of one worker's events: PREFIX.events.worker.ID.
func (s Subjects) Worker(id string) string { return s.prefix() + ".events.worker." + id }

// All matches every event subject; the stream captures it: PREFIX.events.>.
func (s Subjects) All() string { return s.prefix() + ".events.>" }

// Control is the subject on which the controller tells one worker to
// checkpoint, drain or cancel: PREFIX.control.WORKER.
func (s Subjects) Control(workerID string) string { return s.prefix() + ".control." + workerID }

// Validate checks the prefix: dot-separated tokens without wildcards or spaces.
func (s Subjects) Validate() error {
	for _, tok := range strings.Split(s.prefix(), ".") {
		if err := CheckToken(tok); err != nil {
			return fmt.Errorf("subject prefix %q: %w", s.Prefix, err)
		}
	}
	return nil
}

// Pipeline is the subject of one pipeline's events: PREFIX.events.pipeline.NAME.
func (s Subjects) Pipeline(name string) string { return s.prefix() + ".events.pipeline." + name }

// Sweep is the subject of one sweep's events: PREFIX.events.sweep.ID.
func (s Subjects) Sweep(id string) string { return s.prefix() + ".events.sweep." + id }

// System is the subject of events about the installation itself (its
// Redis data): PREFIX.events.system.
func (s Subjects) System() string { return s.prefix() + ".events.system" }

// For returns the subject an event is published on: the worker's for worker
// events, the pipeline's or the sweep's for theirs, the job's for all others.
func (s Subjects) For(e Event) (string, error) {
	switch {
	case e.Type.IsSystem():
		return s.System(), nil
	case e.Type.IsPipeline():
		if err := CheckToken(e.Pipeline); err != nil {
			return "", fmt.Errorf("%s event: pipeline %q: %w", e.Type, e.Pipeline, err)
		}
		return s.Pipeline(e.Pipeline), nil
	case e.Type.IsSweep():
		if err := CheckToken(e.SweepID); err != nil {
			return "", fmt.Errorf("%s event: sweep id %q: %w", e.Type, e.SweepID, err)
		}
		return s.Sweep(e.SweepID), nil
	}
	if e.Type.IsWorker() {
		if err := CheckToken(e.Worker); err != nil {
			return "", fmt.Errorf("%s event: worker %q: %w", e.Type, e.Worker, err)
		}
		return s.Worker(e.Worker), nil
	}
	if err := CheckToken(e.JobID); err != nil {
		return "", fmt.Errorf("%s event: job id %q: %w", e.Type, e.JobID, err)
	}
	return s.Job(e.JobID), nil
}

// CheckToken refuses what would change a subject's meaning: an ID holding
// a dot, a wildcard or a space would publish on, or listen to, other
// subjects. The bus (control/eventbus) checks every ID it subscribes to.
func CheckToken(tok string) error {
	if tok == "" {
		return fmt.Errorf("is empty")
	}
	if i := strings.IndexAny(tok, ".*> \t\r\n"); i >= 0 {
		return fmt.Errorf("must not contain %q (a NATS subject token has no dots, wildcards or spaces)", tok[i])
	}
	return nil
}
