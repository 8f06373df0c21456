package intake

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/events"
)

// Defaults of NATSOptions.
const (
	// DefaultQueueGroup lets several controllers share the submissions: NATS
	// hands each request to one member of the group.
	DefaultQueueGroup = "ballast-intake"
	// DefaultMaxInFlight bounds the submissions handled at once, and so the
	// load on the job store.
	DefaultMaxInFlight = 64
	// DefaultDrainTimeout bounds Stop.
	DefaultDrainTimeout = 30 * time.Second
)

// NATSOptions configures a NATSServer. The zero value is usable.
type NATSOptions struct {
	// Subjects names the submit subjects (PREFIX.jobs.submit and
	// PREFIX.sweeps.submit).
	Subjects events.Subjects
	// Sweeps, when set, is handed the sweeps arriving on
	// PREFIX.sweeps.submit, served in the same queue group, within the same
	// MaxInFlight and Timeout as jobs. A sweep may be up to
	// sweep.MaxSpecBytes (256 KiB), under NATS's default max_payload of
	// 1 MB; a server configured below that refuses larger sweeps before
	// they reach the intake. Nil serves jobs only.
	Sweeps SweepSubmitter
	// Jobs, when set, answers status requests on PREFIX.jobs.get with what
	// the job's record says (JobStatus), in the same queue group. Nil
	// serves no status requests.
	Jobs JobReader
	// QueueGroup defaults to DefaultQueueGroup.
	QueueGroup string
	// Timeout bounds one Submit or SubmitSweep call; default DefaultTimeout.
	Timeout time.Duration
	// MaxInFlight bounds concurrent submissions; default DefaultMaxInFlight.
	// When it is reached, further requests wait in the subscription's
	// buffer.
	MaxInFlight int
	// DrainTimeout bounds how long Stop waits for queued and in-flight
	// requests; default DefaultDrainTimeout.
	DrainTimeout time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// WithDefaults returns a copy with every unset field filled in.
func (o NATSOptions) WithDefaults() NATSOptions {
	if o.QueueGroup == "" {
		o.QueueGroup = DefaultQueueGroup
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxInFlight == 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.DrainTimeout == 0 {
		o.DrainTimeout = DefaultDrainTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Validate reports every bad field, naming it.
func (o NATSOptions) Validate() error {
	var errs []error
	if err := o.Subjects.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("subjects: %w", err))
	}
	if o.Timeout < 0 {
		errs = append(errs, fmt.Errorf("timeout: %s is negative (leave it 0 for %s)", o.Timeout, DefaultTimeout))
	}
	if o.MaxInFlight < 0 {
		errs = append(errs, fmt.Errorf("max_in_flight: %d is negative (leave it 0 for %d)", o.MaxInFlight, DefaultMaxInFlight))
	}
	if o.DrainTimeout < 0 {
		errs = append(errs, fmt.Errorf("drain_timeout: %s is negative (leave it 0 for %s)", o.DrainTimeout, DefaultDrainTimeout))
	}
	return errors.Join(errs...)
}
