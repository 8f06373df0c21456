package events

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Type names what happened. Job types start with "job.", worker types with
// "worker."; the prefix picks the subject an event is published on.
type Type string

// The event types Ballast publishes.
const (
	TypeJobQueued     Type = "job.queued"
	TypeJobRunning    Type = "job.running"
	TypeJobCheckpoint Type = "job.checkpoint"
	TypeJobRequeued   Type = "job.requeued"
	TypeJobSucceeded  Type = "job.succeeded"
	TypeJobFailed     Type = "job.failed"
	TypeJobCancelled  Type = "job.cancelled"
	TypeWorkerUp      Type = "worker.up"
	TypeWorkerLost    Type = "worker.lost"
	// TypeWorkerStopped: a worker drained and left by itself (an elastic
	// worker released, a fixed one shut down), as against worker.lost.
	TypeWorkerStopped Type = "worker.stopped"

	// Pipeline events carry Pipeline and, except pipeline.missed, RunID.
	TypePipelineRunStarted   Type = "pipeline.run.started"
	TypePipelineRunSkipped   Type = "pipeline.run.skipped"
	TypePipelineRunSucceeded Type = "pipeline.run.succeeded"
	TypePipelineRunFailed    Type = "pipeline.run.failed"
	TypePipelineRunCancelled Type = "pipeline.run.cancelled"
	// TypePipelineMissed: scheduled times passed while no controller ran
	// and the catch-up policy dropped them.
	TypePipelineMissed Type = "pipeline.missed"
	// TypePipelineDeadlineMissed: a run was still going, or ended, after
	// its deadline.
	TypePipelineDeadlineMissed Type = "pipeline.deadline_missed"

	// Sweep events carry SweepID.
	TypeSweepCreated      Type = "sweep.created"
	TypeSweepCompleted    Type = "sweep.completed"
	TypeSweepCancelled    Type = "sweep.cancelled"
	TypeSweepTrialStopped Type = "sweep.trial_stopped"

	// TypeRedisDataLost: Redis lost the namespace's data (restarted empty,
	// flushed, rolled back); Data carries the loss record (queues.DataLoss
	// fields). System events go on Subjects.System.
	TypeRedisDataLost Type = "system.redis_data_lost"
	// TypeRedisRecovered: `ballast recover` (or the leader, with
	// redis.recover_on_loss) rebuilt the lost jobs; Data carries the counts.
	TypeRedisRecovered Type = "system.redis_recovered"
)

// IsWorker reports whether the type describes a worker rather than a job.
func (t Type) IsWorker() bool { return strings.HasPrefix(string(t), "worker.") }

// IsPipeline reports whether the type describes a pipeline or one of its runs.
func (t Type) IsPipeline() bool { return strings.HasPrefix(string(t), "pipeline.") }

// IsSystem reports whether the type describes the installation itself
// (its Redis data) rather than one job, worker, pipeline or sweep.
func (t Type) IsSystem() bool { return strings.HasPrefix(string(t), "system.") }

// IsSweep reports whether the type describes a sweep.
func (t Type) IsSweep() bool { return strings.HasPrefix(string(t), "sweep.") }

// Event is one state change. Its JSON form is what travels on NATS and what
// the stream stores.
type Event struct {
	// ID is unique per event and sent as the Nats-Msg-Id header, so that
	// publishing the same event again (a retry after a crash) is stored once.
	// Build it with NewID, or derive it from the change itself (job, attempt,
	// type) when a retry must produce the same ID.
	ID    string `json:"id"`
	Type  Type   `json:"type"`
	JobID string `json:"job_id,omitempty"`
	// Attempt is the delivery (the record's fencing counter); Runs counts
	// the attempts that started, this one included when it runs: a job
	// lent before it ran shows attempt 2, run 1. Job events carry it
	// whether a worker or the controller sends them; 0 means unknown.
	Attempt int        `json:"attempt,omitempty"`
	Runs    int        `json:"runs,omitempty"`
	State   jobs.State `json:"state,omitempty"`
	Queue   string     `json:"queue,omitempty"`
	Worker  string     `json:"worker,omitempty"`
	Reason  string     `json:"reason,omitempty"`
	// Pipeline and RunID name the pipeline run of pipeline events.
	Pipeline string `json:"pipeline,omitempty"`
	RunID    string `json:"run_id,omitempty"`
	// SweepID names the sweep of sweep events.
	SweepID string `json:"sweep_id,omitempty"`
	// Time is when the change happened, set by whoever observed it, so that
	// history reads the same however late the event was delivered.
	Time time.Time `json:"time"`
	// Data carries optional extras (checkpoint, exit code, cost). Its keys
	// are spelled in this package only: build and read it through the
	// type of each kind (JobStart, ParseJobEnd, WorkerInfo and so on);
	// internal/archtest fails on a key spelled elsewhere.
	Data map[string]any `json:"data,omitempty"`
}

// NewID returns a random event ID.
func NewID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error
	return hex.EncodeToString(b[:])
}

// JobEventID is the ID of the event of type t for attempt of job jobID. A
// state change happens once per attempt, so whoever announces it, and however
// often (a retry after a lost reply, a second actor that saw the same
// change), the stream stores it once within DuplicateWindow and Follow
// shows it once.
func JobEventID(jobID string, attempt int, t Type) string {
	// Two per attempt on a worker's path: concatenation, not fmt.
	return jobID + "." + strconv.Itoa(attempt) + "." + string(t)
}

// Validate reports what is missing before an event can be published: an
// event without an ID cannot be deduplicated, and one without a time cannot
// be ordered by readers.
func (e Event) Validate() error {
	var errs []error
	if e.ID == "" {
		errs = append(errs, errors.New("id is empty (use events.NewID)"))
	}
	if e.Type == "" {
		errs = append(errs, errors.New("type is empty"))
	}
	if e.Time.IsZero() {
		errs = append(errs, errors.New("time is zero (set it to when the change happened)"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid event: %w", err)
	}
	return nil
}
