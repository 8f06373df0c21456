package intake

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// JobReader reads job records: all the status reply needs of the store.
// The job store implements it (jobreader_test.go checks it).
type JobReader interface {
	Get(ctx context.Context, id string) (jobs.Job, error)
}

// StatusRequest asks PREFIX.jobs.get for what a job's record says now.
type StatusRequest struct {
	JobID string `json:"job_id"`
}

// JobStatus is the reply to a StatusRequest: the record, which is the truth,
// where an event is only news of it. Followers of events (`submit --wait`)
// ask for it on a timer, so that a lost event delays them by that timer and
// never hangs them. It carries no spec, parameters or logs: anyone allowed
// to submit may ask, and a job ID is all they need.
type JobStatus struct {
	JobID   string     `json:"job_id"`
	State   jobs.State `json:"state"`
	Attempt int        `json:"attempt"`
	// Runs counts the attempts that started; Attempt is the delivery.
	Runs     int    `json:"runs"`
	Queue    string `json:"queue,omitempty"`
	Worker   string `json:"worker,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	// LastError is the last error on record; "error" is kept for failed
	// replies, which every caller probes for first.
	LastError  string    `json:"last_error,omitempty"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
}

// StatusOf is the JobStatus of a record.
func StatusOf(j jobs.Job) JobStatus {
	return JobStatus{JobID: j.ID, State: j.State, Attempt: j.Attempt, Runs: j.Runs, Queue: j.Queue, Worker: j.Worker,
		ExitCode: j.ExitCode, LastError: j.LastError, FinishedAt: j.FinishedAt}
}

// maxStatusRequest bounds a status request: it holds one ID.
const maxStatusRequest = 1024

// statusEndpoint serves StatusRequest on PREFIX.jobs.get.
type statusEndpoint struct {
	jobs    JobReader
	timeout time.Duration
	log     *slog.Logger
}

func (s *statusEndpoint) limit() int { return maxStatusRequest }

func (s *statusEndpoint) refuseTooLarge(int) (int, []byte) {
	return errorReply(Error{Code: CodeTooLarge, Message: fmt.Sprintf("a status request is {\"job_id\": ID}, at most %d bytes", maxStatusRequest)})
}

func (s *statusEndpoint) handle(ctx context.Context, data []byte, attrs ...any) (status int, body []byte) {
	defer replyOnPanic(s.log, "reading a job's status", &attrs, &status, &body)
	if len(data) > maxStatusRequest {
		return s.refuseTooLarge(len(data))
	}
	var req StatusRequest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return errorReply(Error{Code: CodeInvalid, Message: "a status request is {\"job_id\": ID}: " + err.Error(),
			Problems: []*jobs.FieldError{{Field: "body", Message: err.Error()}}})
	}
	if !jobs.ValidID(req.JobID) {
		return errorReply(Error{Code: CodeInvalid, Message: "job_id is not a job ID",
			Problems: []*jobs.FieldError{{Field: "job_id", Message: fmt.Sprintf("%.80q is not a job ID (28 hex digits, as a receipt gives)", req.JobID)}}})
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	j, err := s.jobs.Get(ctx, req.JobID)
	switch {
	case errors.Is(err, jobs.ErrNotFound):
		return errorReply(Error{Code: CodeNotFound, Message: "no job " + req.JobID + " (never submitted, or its record expired)"})
	case err != nil:
		s.log.Warn("intake: job store unavailable for a status request", append(attrs, "job", req.JobID, "error", err)...)
		return errorReply(Error{Code: CodeUnavailable, Message: "the job store is unavailable: retry"})
	}
	return http.StatusOK, encode(StatusOf(j))
}
