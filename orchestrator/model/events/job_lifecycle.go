package events

import "time"

// The Data keys of the job events a worker publishes over an attempt's
// life (job.running, job.checkpoint, job.requeued and the ends), written
// by the Data methods and read by the Parse functions of this file only,
// so that producers and consumers cannot drift apart on a spelling.
const (
	jobClass      = "class"
	jobQoS        = "qos"
	jobPool       = "pool"
	jobWait       = "wait_seconds"
	jobResumeFrom = "resume_from"
	jobExitCode   = "exit_code"
	jobTo         = "to"
	jobCheckpoint = "checkpoint"
	jobKilled     = "killed"
)

// JobStart is what a job.running event says: where the attempt runs, which
// checkpoint it resumes from, and how long it waited in its queue.
type JobStart struct {
	Pool       string
	ResumeFrom string
	Class      string
	// Wait is submit to start for the first attempt, requeue to start
	// after; never negative.
	Wait time.Duration
	// HasWait, set by ParseJobStart, says the event carried a wait (older
	// ones may not); Data always writes one.
	HasWait bool
}

// Data is s as a job.running event's Data.
func (s JobStart) Data() map[string]any {
	return map[string]any{jobPool: s.Pool, jobResumeFrom: s.ResumeFrom, jobClass: s.Class, jobWait: s.Wait.Seconds()}
}

// ParseJobStart reads a job.running event back; false for any other type.
func ParseJobStart(e Event) (JobStart, bool) {
	if e.Type != TypeJobRunning {
		return JobStart{}, false
	}
	s := JobStart{Class: JobClass(e)}
	s.Pool, _ = e.Data[jobPool].(string)
	s.ResumeFrom, _ = e.Data[jobResumeFrom].(string)
	var w any
	w, s.HasWait = e.Data[jobWait]
	s.Wait = time.Duration(number(w) * float64(time.Second))
	return s, true
}

// JobEnd is what a job end event (succeeded, failed, cancelled) says.
type JobEnd struct {
	Class string
	// ExitCode is nil when the process gave none (killed, never started).
	ExitCode *int
	// QoS holds the attempt's cgroup counters, as the worker measured
	// them; nil when it measured none.
	QoS map[string]any
	// Unrecorded, when set, says why no job record took the end (see
	// DataUnrecorded).
	Unrecorded string
}

// Data is x as a job end event's Data; the optional fields are left out
// when unset, as they always were.
func (x JobEnd) Data() map[string]any {
	d := map[string]any{jobClass: x.Class}
	if x.ExitCode != nil {
		d[jobExitCode] = *x.ExitCode
	}
	if x.QoS != nil {
		d[jobQoS] = x.QoS
	}
	if x.Unrecorded != "" {
		d[DataUnrecorded] = x.Unrecorded
	}
	return d
}

// ParseJobEnd reads a job end event back; false for any other type.
func ParseJobEnd(e Event) (JobEnd, bool) {
	switch e.Type {
	case TypeJobSucceeded, TypeJobFailed, TypeJobCancelled:
	default:
		return JobEnd{}, false
	}
	x := JobEnd{Class: JobClass(e), QoS: JobQoS(e)}
	switch c := e.Data[jobExitCode].(type) {
	case float64:
		code := int(c)
		x.ExitCode = &code
	case int:
		x.ExitCode = &c
	}
	x.Unrecorded, _ = e.Data[DataUnrecorded].(string)
	return x, true
}

// JobRequeue is what a job.requeued event a worker publishes says. A
// preemption names the queue it went to, the checkpoint it keeps and
// whether the process had to be killed; any other requeue names the
// checkpoint the next attempt resumes from.
type JobRequeue struct {
	Preempted bool
	// ResumeFrom (not preempted) and Checkpoint (preempted) are the
	// attempt's last checkpoint token.
	ResumeFrom string
	To         string
	Checkpoint string
	Killed     bool
	QoS        map[string]any
}

// Data is q as a job.requeued event's Data.
func (q JobRequeue) Data() map[string]any {
	d := map[string]any{jobResumeFrom: q.ResumeFrom}
	if q.Preempted {
		d = map[string]any{jobTo: q.To, jobCheckpoint: q.Checkpoint, jobKilled: q.Killed}
	}
	if q.QoS != nil {
		d[jobQoS] = q.QoS
	}
	return d
}

// ParseJobRequeue reads a job.requeued event back; false for any other
// type. A requeue whose data names a destination queue is a preemption.
func ParseJobRequeue(e Event) (JobRequeue, bool) {
	if e.Type != TypeJobRequeued {
		return JobRequeue{}, false
	}
	q := JobRequeue{QoS: JobQoS(e)}
	_, q.Preempted = e.Data[jobTo]
	q.ResumeFrom, _ = e.Data[jobResumeFrom].(string)
	q.To, _ = e.Data[jobTo].(string)
	q.Checkpoint, _ = e.Data[jobCheckpoint].(string)
	q.Killed, _ = e.Data[jobKilled].(bool)
	return q, true
}

// CheckpointData is the Data of a job.checkpoint event that a worker
// publishes when a checkpoint is recorded without a store: its token.
// (A commit through a store says more: see CheckpointTransfer.)
func CheckpointData(token string) map[string]any {
	return map[string]any{ckToken: token}
}

// CheckpointToken is the token a job.checkpoint event names, "" for none.
func CheckpointToken(e Event) string {
	if e.Type != TypeJobCheckpoint {
		return ""
	}
	t, _ := e.Data[ckToken].(string)
	return t
}

// JobClass is the class a job event names ("" when it names none): the
// queued, running, requeued and end events all carry it.
func JobClass(e Event) string {
	c, _ := e.Data[jobClass].(string)
	return c
}

// JobQoS is the cgroup counters a job end or requeue event carries, as
// decoded from JSON; nil when it carries none.
func JobQoS(e Event) map[string]any {
	q, _ := e.Data[jobQoS].(map[string]any)
	return q
}
