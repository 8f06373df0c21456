package workers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/queues"
)

// ControlAction is what a control message asks of a worker.
type ControlAction string

// The control actions a worker understands.
const (
	// ControlPreempt: checkpoint the attempt and requeue it where
	// queues.Store.RequestPreempt said.
	ControlPreempt ControlAction = "preempt"
	// ControlCancel: stop the attempt and record it cancelled
	// (queues.Store.Cancel).
	ControlCancel ControlAction = "cancel"
	// ControlSpotNotice: the provider reclaims this (spot) worker soon:
	// checkpoint and requeue every job, then exit
	// (registry.Store.RequestSpotNotice).
	ControlSpotNotice ControlAction = "spot_notice"
	// ControlDrain: stop taking work; running jobs finish where they are
	// (registry.Store.RequestDrain). The controller releases the worker once
	// it is empty.
	ControlDrain ControlAction = "drain"
)

// ControlMessage is the JSON a controller publishes on a worker's control
// subject (events.Subjects.Control) to make it act on a request at once
// rather than at its next heartbeat.
//
// It is a wake-up, not a command: every request is already recorded in Redis
// before it is sent (RequestPreempt and Cancel in the job record,
// RequestDrain and RequestSpotNotice on the worker's registry entry), and on
// any message the worker only beats, reading what is recorded for it and its
// attempts; none of the message's fields is trusted. So a lost message only
// costs a heartbeat of delay, a duplicate costs one Redis round trip, and a
// forged or replayed one changes nothing.
type ControlMessage struct {
	JobID   string        `json:"job_id,omitempty"`
	Attempt int           `json:"attempt,omitempty"`
	Action  ControlAction `json:"action"`
	// NoticeSeconds is how long a spot notice leaves before the machine
	// goes. Informational: the worker uses the recorded deadline.
	NoticeSeconds int `json:"notice_seconds,omitempty"`
}

// Validate names what is wrong with a message.
func (m ControlMessage) Validate() error {
	if m.Action == ControlDrain {
		return nil
	}
	if m.Action == ControlSpotNotice {
		if m.NoticeSeconds < 0 {
			return fmt.Errorf("notice_seconds: %d is negative", m.NoticeSeconds)
		}
		return nil // it concerns the whole worker, not one job
	}
	var errs []error
	if m.JobID == "" {
		errs = append(errs, errors.New("job_id is empty"))
	}
	if m.Attempt < 1 {
		errs = append(errs, fmt.Errorf("attempt: %d is not a valid attempt (the first is 1)", m.Attempt))
	}
	if m.Action != ControlPreempt && m.Action != ControlCancel {
		errs = append(errs, fmt.Errorf("action: %q is unknown (use %q, %q or %q)", m.Action, ControlPreempt, ControlCancel, ControlSpotNotice))
	}
	return errors.Join(errs...)
}

// NotifyControl publishes msg on workerID's control subject. Call it after
// the request is recorded in Redis, never instead: the worker acts on the
// record, and the message only makes it look now. Publishing is best
// effort (nats.go buffers and flushes in the background); an error means
// the worker will learn of the request at its next heartbeat instead.
//
// It lives here, next to the subscriber, so that the wire format has one
// owner; it needs only a NATS connection, not a job store or a worker.
func NotifyControl(nc *nats.Conn, subj events.Subjects, workerID string, msg ControlMessage) error {
	if err := msg.Validate(); err != nil {
		return fmt.Errorf("workers.NotifyControl: %w", err)
	}
	if err := checkControlID(workerID); err != nil {
		return fmt.Errorf("workers.NotifyControl: %w", err)
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("workers.NotifyControl: %w", err)
	}
	if err := nc.Publish(subj.Control(workerID), b); err != nil {
		return fmt.Errorf("workers.NotifyControl to %s: %w", workerID, err)
	}
	return nil
}

// checkControlID refuses a worker ID that would turn its control subject into
// a wildcard (listening to, or publishing on, other workers' subjects). Dots
// are allowed: a dotted host name makes a longer subject, still exact.
func checkControlID(id string) error {
	if id == "" {
		return errors.New("worker id is empty")
	}
	if i := strings.IndexAny(id, "*> \t\r\n"); i >= 0 {
		return fmt.Errorf("worker id %q must not contain %q: it would be a NATS wildcard or break the subject", id, id[i])
	}
	if strings.HasPrefix(id, ".") || strings.HasSuffix(id, ".") || strings.Contains(id, "..") {
		return fmt.Errorf("worker id %q would make an empty NATS subject token", id)
	}
	return nil
}

// syncControl makes the control subscription follow the worker's current
// identity: after a fence the controller addresses the new ID, and messages
// for the fenced one are for attempts that are already being stopped.
func (w *Worker) syncControl() error {
	if w.opts.Control == nil {
		return nil
	}
	w.ctlMu.Lock()
	defer w.ctlMu.Unlock()
	id := w.ID()
	if w.ctlClosed || (w.ctlSub != nil && w.ctlID == id) {
		return nil
	}
	if w.ctlSub != nil {
		// A failed unsubscribe leaves a subscription on a dead name: it can
		// only wake a beat, which is harmless.
		_ = w.ctlSub.Unsubscribe()
		w.ctlSub = nil
	}
	sub, err := w.opts.Control.Subscribe(w.opts.Subjects.Control(id), w.onControl)
	if err != nil {
		return fmt.Errorf("subscribe to control messages for %s: %w", id, err)
	}
	w.ctlSub, w.ctlID = sub, id
	// Make sure the server knows of the interest before work is taken, so a
	// request for the first job is not published into the void. Only a
	// wake-up is at stake, so a slow server is logged, not fatal.
	if err := w.opts.Control.FlushTimeout(2 * time.Second); err != nil {
		w.log.Warn("control subscription not confirmed; requests still arrive by heartbeat", "err", err)
	}
	return nil
}

// stopControl ends the subscription for good (the worker is stopping).
func (w *Worker) stopControl() {
	w.ctlMu.Lock()
	defer w.ctlMu.Unlock()
	w.ctlClosed = true
	if w.ctlSub != nil {
		_ = w.ctlSub.Unsubscribe()
		w.ctlSub = nil
	}
}

// onControl handles a control message: it wakes the heartbeat loop, which
// reads what Redis records for this worker and its attempts (the truth) and
// acts on that alone. A burst of messages collapses into one beat, and beats
// never run concurrently.
func (w *Worker) onControl(m *nats.Msg) {
	var msg ControlMessage
	if err := json.Unmarshal(m.Data, &msg); err != nil {
		w.log.Warn("malformed control message ignored", "subject", m.Subject, "err", err)
		return
	}
	if err := msg.Validate(); err != nil {
		w.log.Warn("invalid control message ignored", "subject", m.Subject, "err", err)
		return
	}
	w.log.Debug("control message: checking the registry now", "job", msg.JobID, "attempt", msg.Attempt, "action", msg.Action)
	select {
	case w.wake <- struct{}{}:
	default: // a beat is already due; it will see this request too
	}
}

// actOnIntents carries out the worker intents a beat read from the
// registry. Both are idempotent, so every beat may repeat them.
func (w *Worker) actOnIntents(b queues.Beat) {
	if b.Drain {
		w.StopTakingWork()
	}
	if b.SpotNotice.IsZero() {
		return
	}
	if !w.opts.Spot {
		// The registry refuses a spot notice for a non-spot worker; one
		// found anyway (written by hand, or the pool changed kind) must not
		// take fixed or on-demand capacity away.
		w.spotRefused.Do(func() {
			w.log.Error("spot notice recorded for a worker that is not in a spot pool: ignored", "deadline", b.SpotNotice)
		})
		return
	}
	go w.spotNotice(b.SpotNotice)
}

// NATSControl sends control messages to workers over NATS. It is what the
// controller's capacity adapter uses to wake a worker about a preemption and
// to drain one. Send errors are dropped on purpose: the Redis record is the
// request, the message only saves waiting for a heartbeat.
type NATSControl struct {
	Conn     *nats.Conn
	Subjects events.Subjects
}

// Preempted wakes workerID to act on the preempt request of job's attempt.
func (c NATSControl) Preempted(_ context.Context, workerID, jobID string, attempt int) {
	_ = NotifyControl(c.Conn, c.Subjects, workerID, ControlMessage{JobID: jobID, Attempt: attempt, Action: ControlPreempt})
}

// Drain wakes workerID to act on the drain recorded for it
// (registry.Store.RequestDrain).
func (c NATSControl) Drain(_ context.Context, workerID string) {
	_ = NotifyControl(c.Conn, c.Subjects, workerID, ControlMessage{Action: ControlDrain})
}

// SpotNotice wakes workerID to act on the spot notice recorded for it
// (registry.Store.RequestSpotNotice).
func (c NATSControl) SpotNotice(_ context.Context, workerID string, within time.Duration) {
	_ = NotifyControl(c.Conn, c.Subjects, workerID, ControlMessage{Action: ControlSpotNotice, NoticeSeconds: int(within.Seconds())})
}

// Cancelled wakes workerID to act on the cancel recorded for job's attempt
// (queues.Store.Cancel), so the job stops now rather than at the next beat.
func (c NATSControl) Cancelled(_ context.Context, workerID, jobID string, attempt int) {
	_ = NotifyControl(c.Conn, c.Subjects, workerID, ControlMessage{JobID: jobID, Attempt: attempt, Action: ControlCancel})
}
