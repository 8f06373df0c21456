package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/sweep"
)

// NATS submits jobs as NATS requests on PREFIX.jobs.submit, and sweeps on
// PREFIX.sweeps.submit.
type NATS struct {
	nc   *nats.Conn
	subj events.Subjects
	// Options tunes retries; set it before the first Submit.
	Options Options
}

// NewNATS returns a client that submits through nc. subj must use the same
// prefix as the controller.
func NewNATS(nc *nats.Conn, subj events.Subjects) *NATS {
	return &NATS{nc: nc, subj: subj}
}

// Submit sends s and returns the receipt, retrying as Options say.
func (c *NATS) Submit(ctx context.Context, s jobs.Submission) (intake.Receipt, error) {
	if c == nil || c.nc == nil {
		return intake.Receipt{}, errors.New("client.Submit: no NATS connection")
	}
	return submit(ctx, c.Options.WithDefaults(), jobKind, s, natsTry(c, jobKind))
}

// SubmitSweep sends spec and returns the sweep's receipt, retrying as
// Options say. A spec without an idempotency key gets a random one, as in
// Submit. Specs of up to sweep.MaxSpecBytes fit NATS's default payload
// limit of 1 MB.
func (c *NATS) SubmitSweep(ctx context.Context, spec sweep.Spec) (intake.SweepReceipt, error) {
	if c == nil || c.nc == nil {
		return intake.SweepReceipt{}, errors.New("client.SubmitSweep: no NATS connection")
	}
	return submit(ctx, c.Options.WithDefaults(), sweepKind, spec, natsTry(c, sweepKind))
}

// natsTry sends one request of kind k through c.
func natsTry[V, R any](c *NATS, k kind[V, R]) tryFunc[R] {
	return func(ctx context.Context, body []byte) (R, error) {
		var zero R
		subject := k.subject(c.subj)
		m, err := c.nc.RequestWithContext(ctx, subject, body)
		switch {
		case errors.Is(err, nats.ErrNoResponders):
			return zero, fmt.Errorf("%w on %s: start `ballast controller` or `ballast dev`, or check the subject prefix (%w)", ErrNoIntake, subject, err)
		case err != nil:
			return zero, fmt.Errorf("request on %s: %w", subject, err)
		}
		return decodeReply(m.Data, 0, k)
	}
}

// Status asks the intake for what job id's record says now (PREFIX.jobs.get).
// It is one request, not retried: a follower calls it on a timer anyway.
// An unknown job is an *Error with Code intake.CodeNotFound.
func (c *NATS) Status(ctx context.Context, id string) (intake.JobStatus, error) {
	if c == nil || c.nc == nil {
		return intake.JobStatus{}, errors.New("client.Status: no NATS connection")
	}
	body, err := json.Marshal(intake.StatusRequest{JobID: id})
	if err != nil {
		return intake.JobStatus{}, fmt.Errorf("client.Status: %w", err)
	}
	st, err := natsTry(c, statusKind)(ctx, body)
	if err != nil {
		return intake.JobStatus{}, fmt.Errorf("client.Status: %w", err)
	}
	return st, nil
}
