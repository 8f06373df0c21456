package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// RecoverOptions configures Recover.
type RecoverOptions struct {
	Store DataLossRecoverer
	// Replay reads every job event of the stream (eventbus.Replay bound to
	// the installation's stream).
	Replay func(ctx context.Context, fn func(events.Event)) (int, error)
	// Router places a rebuilt job whose events name no queue.
	Router Router
	Events events.Publisher
	Logger *slog.Logger
	// Settle is how old the loss record must be before the stream is
	// read; Recover waits for the rest. A job that was running when Redis
	// lost its data is stopped by its worker at the worker's next beat, or
	// ends first and has its end published (marked unrecorded) once the
	// worker's retry finds the record gone; a worker cut off self-fences
	// within the worker TTL. Rebuilt before then, such a job would run
	// beside its old attempt, or again after it ended.
	Settle time.Duration
	// KeepRecord leaves the loss record in place after recovery; by
	// default a recovery that rebuilt every missing job removes it (one
	// that found jobs it cannot rebuild leaves it for the operator).
	KeepRecord bool
}

// RecoverReport counts what Recover did, job by job of those the stream
// says were accepted.
type RecoverReport struct {
	// Events is how many job events the stream held.
	Events int `json:"events"`
	// Accepted is how many jobs the stream names as accepted.
	Accepted int `json:"accepted"`
	// Rebuilt jobs were missing from Redis and are queued again; Rerun of
	// them had started before the loss and so run again (at least once:
	// the side effects of a run cut short by the loss may repeat).
	Rebuilt int `json:"rebuilt"`
	Rerun   int `json:"rerun"`
	// SkippedFinished ended before the loss (the stream holds their end):
	// they are not run again, whether or not Redis still has them.
	SkippedFinished int `json:"skipped_finished"`
	// AlreadyPresent have their record in Redis: left alone.
	AlreadyPresent int `json:"already_present"`
	// Resubmitted were submitted again after the loss under the same
	// idempotency key: the new job runs them, the old one is not rebuilt.
	Resubmitted int `json:"resubmitted"`
	// NoSpec are missing jobs the stream cannot rebuild: their job.queued
	// event carries no spec (published before events carried specs, too
	// large, or aged out of the stream). Listed for resubmission.
	NoSpec     int      `json:"no_spec"`
	NoSpecJobs []string `json:"no_spec_jobs,omitempty"`
	// Cleared says the loss record was removed.
	Cleared bool `json:"loss_record_cleared"`
}

// streamJob is what the stream says of one job.
type streamJob struct {
	spec     *jobs.Spec
	omitted  string // why the spec is not there
	created  time.Time
	queue    string
	attempt  int
	started  bool
	ended    jobs.State
	accepted bool // a job.queued event was seen
}

// foldJobEvent adds e to what the stream says of its job.
func foldJobEvent(seen map[string]*streamJob, e events.Event, log *slog.Logger) {
	if e.JobID == "" {
		return
	}
	j := seen[e.JobID]
	if j == nil {
		j = &streamJob{}
		seen[e.JobID] = j
	}
	j.attempt = max(j.attempt, e.Attempt)
	switch {
	case e.Type == events.TypeJobQueued:
		j.accepted, j.created = true, e.Time
		if j.queue == "" {
			j.queue = e.Queue
		}
		spec, ok, err := events.QueuedSpec(e)
		switch {
		case err != nil:
			log.Warn("a job.queued event's spec cannot be read", "job", e.JobID, "err", err)
			j.omitted = err.Error()
		case ok:
			j.spec = &spec
		default:
			j.omitted = events.QueuedSpecOmitted(e)
		}
	case e.Type == events.TypeJobRunning:
		j.started = true
	case e.State.Terminal():
		j.ended = e.State
	case e.State == jobs.StateQueued && e.Queue != "":
		// A requeue, move or overflow: the queue it waits in now.
		j.queue = e.Queue
	}
}

// Recover rebuilds the jobs Redis lost from the event stream: every job a
// job.queued event names, whose end the stream does not hold, and whose
// record is missing, is written again from the spec that event carries,
// queued at an attempt past any it had. Jobs that ended are not run again;
// jobs that had started run again once (at-least-once). It is repeatable:
// a record that is there is left alone, so a second run rebuilds nothing.
// When every missing job was rebuilt, the loss record is removed.
func Recover(ctx context.Context, o RecoverOptions) (RecoverReport, error) {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	var rep RecoverReport
	if o.Store == nil || o.Replay == nil {
		return rep, errors.New("controller.Recover: a store and the event stream are needed")
	}
	if err := settle(ctx, o, log); err != nil {
		return rep, err
	}
	seen := map[string]*streamJob{}
	n, err := o.Replay(ctx, func(e events.Event) { foldJobEvent(seen, e, log) })
	rep.Events = n
	if err != nil {
		return rep, fmt.Errorf("controller.Recover: reading the event stream: %w (nothing was rebuilt from an incomplete history)", err)
	}
	ids := make([]string, 0, len(seen))
	for id, j := range seen {
		if j.accepted {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids) // job IDs sort by submission time: rebuilt oldest first
	rep.Accepted = len(ids)
	var errs []error
	for _, id := range ids {
		j := seen[id]
		if j.ended != "" {
			rep.SkippedFinished++
			continue
		}
		if err := rebuildOne(ctx, o, id, j, &rep); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return rep, fmt.Errorf("controller.Recover: %w (run it again: what was rebuilt stays)", err)
	}
	// A job the stream cannot rebuild is still lost: the record stays
	// until an operator resubmits it and acknowledges.
	if !o.KeepRecord && rep.NoSpec == 0 {
		l, err := o.Store.AckDataLoss(ctx)
		if err != nil {
			return rep, fmt.Errorf("controller.Recover: rebuilt, but the loss record stays: %w", err)
		}
		rep.Cleared = l != nil
	}
	publish(o.Events, log, events.Event{ID: events.NewID(), Type: events.TypeRedisRecovered, Time: time.Now(),
		Data: events.Recovered{Rebuilt: rep.Rebuilt, Rerun: rep.Rerun, SkippedFinished: rep.SkippedFinished,
			AlreadyPresent: rep.AlreadyPresent, Resubmitted: rep.Resubmitted, NoSpec: rep.NoSpec}.Data()})
	return rep, nil
}

// settle waits until the loss record is o.Settle old (no record: no
// wait, as for an operator who acknowledged it and recovers anyway).
func settle(ctx context.Context, o RecoverOptions, log *slog.Logger) error {
	if o.Settle <= 0 {
		return nil
	}
	_, loss, err := o.Store.ReadEpoch(ctx)
	if err != nil {
		return fmt.Errorf("controller.Recover: %w", err)
	}
	if loss == nil {
		return nil
	}
	wait := time.Until(loss.At.Add(o.Settle))
	if wait <= 0 {
		return nil
	}
	log.Info("waiting for the workers to stop the lost jobs' attempts, or publish their ends, before rebuilding",
		"wait", wait.Round(time.Millisecond), "loss_at", loss.At)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("controller.Recover: %w (nothing was rebuilt)", ctx.Err())
	}
}

// rebuildOne restores one unfinished job of the stream if Redis lacks it.
func rebuildOne(ctx context.Context, o RecoverOptions, id string, j *streamJob, rep *RecoverReport) error {
	if _, err := o.Store.Get(ctx, id); err == nil {
		rep.AlreadyPresent++
		return nil
	} else if !errors.Is(err, jobs.ErrNotFound) {
		return err
	}
	if j.spec == nil {
		rep.NoSpec++
		rep.NoSpecJobs = append(rep.NoSpecJobs, id)
		return nil
	}
	q := queues.Queue(j.queue)
	if !q.Valid() || (q == queues.QueueHeld && !o.Router.Held) {
		// Held work is only admitted with shares on; without them
		// the router says where it goes.
		q = o.Router.Route(*j.spec)
	}
	res, other, err := o.Store.Restore(ctx, queues.Restoring{ID: id, Spec: *j.spec, Queue: q, Created: j.created, Attempt: j.attempt + 1})
	if err != nil {
		return err
	}
	switch res {
	case queues.RestorePresent:
		rep.AlreadyPresent++
	case queues.RestoreResubmitted:
		rep.Resubmitted++
		o.logger().Info("not rebuilt: its idempotency key names a job submitted since", "job", id, "by", other)
	case queues.RestoreCreated:
		rep.Rebuilt++
		reason := "rebuilt from the event stream after Redis lost its data"
		if j.started {
			rep.Rerun++
			reason += "; it had started, so it runs again (at least once)"
		}
		publish(o.Events, o.logger(), events.Event{ID: events.JobEventID(id, j.attempt+1, events.TypeJobRequeued), Type: events.TypeJobRequeued,
			JobID: id, Attempt: j.attempt + 1, State: jobs.StateQueued, Queue: string(q), Reason: reason, Time: time.Now()})
	}
	return nil
}

func (o RecoverOptions) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.Default()
	}
	return o.Logger
}
