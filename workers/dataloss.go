package workers

import "context"

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
