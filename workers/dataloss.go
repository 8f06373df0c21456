package workers

import (
	"context"
	"errors"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// watchEpoch looks at the namespace's epoch (queues.EpochWatch) at each
// heartbeat. A worker only reads it: controllers write a new epoch, so a
// worker that looked first cannot hide the loss from them. Finding a loss,
// the worker records it (once for everyone) and says so; the attempts it
// then cannot record are explained by it (whyUnrecorded).
func (w *Worker) watchEpoch(ctx context.Context) {
	v, err := w.epoch.Check(ctx)
	if err != nil {
		return // the heartbeat that follows reports Redis trouble
	}
	if v.Found != "" && v.Loss != nil {
		w.log.Error(v.Loss.Message()+": the records of the jobs running here are gone; their results cannot be recorded",
			"reason", v.Loss.Reason, "recorded_by", v.Loss.By)
	}
}

// whyUnrecorded says why an attempt's result or stop was not recorded:
// normally the attempt had moved on (requeued, fenced, cancelled), but
// while a loss of Redis data stands the record is most likely gone with
// it, and "moved on" would send an operator looking for a requeue that
// never happened.
func (w *Worker) whyUnrecorded() string {
	if l := w.epoch.Loss(); l != nil {
		return "the job record is gone because " + l.Message()
	}
	return "the attempt had moved on"
}

// recordGone reports whether job id has no record at all (as opposed to a
// record whose attempt moved on). An error reads as not gone: the caller
// then does what it did before it could tell.
func (w *Worker) recordGone(id string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := w.deliveries.Get(ctx, id)
	return errors.Is(err, jobs.ErrNotFound)
}

// whyNotRecorded says why job id's attempt could not record its end or
// its stop, and whether the record is gone (rather than moved on). The
// record is read: the epoch look, on a budget of its own, may have failed
// as Redis came back, and a vanished record must not be called moved on.
func (w *Worker) whyNotRecorded(id string) (string, bool) {
	gone := w.recordGone(id)
	if gone && w.epoch.Loss() == nil {
		// Look now rather than at the next beat, so that the line says why.
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		w.watchEpoch(ctx)
		cancel()
	}
	switch l := w.epoch.Loss(); {
	case l != nil:
		return "the job record is gone because " + l.Message(), gone
	case gone:
		return "the job record is gone", true
	}
	return "the attempt had moved on", false
}

// unrecordedEnd handles a run that ended but whose end the record did not
// take. When the attempt moved on, its new attempt speaks for the job.
// When the record is gone (Redis lost its data while the job ran, perhaps
// before any process has looked), nothing in Redis will ever say the run
// ended: the end event is published anyway, marked unrecorded, because
// the event stream is what recovery rebuilds the lost jobs from, and a job
// whose end it holds is not run again. Without it a job that finished
// just after the loss ran a second time after recovery.
func (w *Worker) unrecordedEnd(r *running, state jobs.State, code *int, msg string) {
	j := r.job
	why, gone := w.whyNotRecorded(j.ID)
	if !gone {
		w.log.Warn("result not recorded: "+why, "job", j.ID, "attempt", j.Attempt)
		return
	}
	w.log.Warn("result not recorded: "+why+"; the end is published to the event stream so that recovery does not run it again",
		"job", j.ID, "attempt", j.Attempt, "state", state)
	if !w.announces() {
		return
	}
	data := events.JobEnd{Class: string(j.Spec.Class), ExitCode: code, Unrecorded: why}.Data()
	w.publish(events.Event{ID: eventID(j, eventType(state)), Type: eventType(state), JobID: j.ID, Attempt: j.Attempt, Runs: j.Runs,
		State: state, Queue: j.Queue, Worker: r.worker, Reason: msg, Time: w.opts.Now(), Data: data})
}
