package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/jobs"
	"github.com/ballastdev/ballast/orchestrator/events"
	"github.com/ballastdev/ballast/orchestrator/intake"
)

// NATS submits jobs as NATS requests on PREFIX.jobs.submit.
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
	return submit(ctx, c.Options.WithDefaults(), s, c.try)
}

func (c *NATS) try(ctx context.Context, body []byte) (intake.Receipt, error) {
	subject := c.subj.Submit()
	m, err := c.nc.RequestWithContext(ctx, subject, body)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return intake.Receipt{}, fmt.Errorf("%w on %s: start `ballast controller` or `ballast dev`, or check the subject prefix (%w)", ErrNoIntake, subject, err)
	case err != nil:
		return intake.Receipt{}, fmt.Errorf("request on %s: %w", subject, err)
	}
	return decodeReply(m.Data, 0)
}
