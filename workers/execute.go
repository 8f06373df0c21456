package workers

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/hibiken/asynq"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// process is the asynq handler: one delivery of one attempt.
func (w *Worker) process(ctx context.Context, t *asynq.Task) error {
	d, err := queues.DecodeDelivery(t.Payload())
	if err != nil {
		w.log.Error("malformed task archived", "err", err)
		return fmt.Errorf("%w: %v", asynq.SkipRetry, err)
	}
	if w.isDraining() {
		// Fetched just before the drain began: leave it to asynq to requeue
		// the same attempt for another worker.
		return fmt.Errorf("worker draining")
	}
	slotKey := queues.MemberTaskID(d.JobID, d.Attempt, d.Member)
	slots, err := w.admit(ctx, d, slotKey)
	if err != nil || slots == 0 {
		return err
	}
	// Whatever happens from here, the slots are given back when the
	// attempt is over here: run, refused, or never claimed.
	defer w.slots.release(slotKey)
	if w.isDraining() {
		return fmt.Errorf("worker draining") // it began while this delivery waited
	}
	if w.selfFenced() {
		// Its registration may lapse before this attempt could even start:
		// asynq hands the delivery on.
		return fmt.Errorf("worker self-fenced: cannot renew its registration")
	}
	wid := w.ID()
	var j jobs.Job
	var gang *gangEnv
	if d.Members > 1 {
		// A gang's member starts only once every member is claimed. From
		// its claim it counts as run here, though it is not enlisted yet.
		defer w.assemble(d)()
		if j, gang, err = w.joinGang(ctx, d, wid); err != nil {
			return err
		}
	} else {
		var ok bool
		j, ok, err = w.deliveries.ClaimBy(ctx, d, queues.Claimant{Worker: wid, Incarnation: w.inc, Pool: w.opts.Pool})
		if errors.Is(err, queues.ErrFenced) {
			// The delivery is valid, this identity is not: take a new one and
			// let asynq redeliver the attempt.
			w.refence("claim")
			return err
		}
		if err != nil {
			// Redis trouble: asynq redelivers this attempt after a back-off.
			return err
		}
		if !ok {
			return fmt.Errorf("%w: %s: %w", asynq.RevokeTask, queues.TaskID(d.JobID, d.Attempt), errStale)
		}
		if ended, err := w.endedAlready(ctx, j, wid); ended || err != nil {
			if err != nil {
				return err // the claim is repeatable: the redelivery tries again
			}
			return fmt.Errorf("%w: %s: %w", asynq.RevokeTask, queues.TaskID(d.JobID, d.Attempt), errStale)
		}
	}
	r, key := w.enlist(j, wid, slots, gang, d.Member)
	if r == nil {
		// A second delivery of an attempt this process runs (the claim of
		// its own attempt is repeatable): the first one owns it.
		return fmt.Errorf("%w: %s: %w", asynq.RevokeTask, key, errStale)
	}
	w.carry(ctx, r, key, wid)
	return nil
}

// enlist records claimed attempt j (member of its gang, when gang is not
// nil) as running here on slots, under the key it runs by, and returns
// both. It returns a nil running when the attempt already runs here.
func (w *Worker) enlist(j jobs.Job, wid string, slots int, gang *gangEnv, member int) (*running, string) {
	r := newRunning(j, wid, w.opts.Now)
	r.slots = slots
	r.gang = gang
	// One key per member: two members of a gang may share a worker.
	key := queues.MemberTaskID(j.ID, j.Attempt, member)
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, dup := w.jobs[key]; dup {
		return nil, key
	}
	w.jobs[key] = r
	return r, key
}

// carry runs enlisted attempt r to its end and settles it, then strikes
// it from the running attempts.
func (w *Worker) carry(ctx context.Context, r *running, key, wid string) {
	defer func() {
		w.mu.Lock()
		delete(w.jobs, key)
		w.forgetGate(r.job.ID)
		w.mu.Unlock()
	}()
	if !r.peer() { // a gang's start is announced once, by member 0
		w.publishRunning(r.job, wid)
	}
	span := w.startAttemptSpan(ctx, r.job, wid)
	res := w.runBound(r, key)
	w.endUploads(r, res)
	endAttemptSpan(span, w.settle(r, res), res)
}

// publishRunning announces that attempt j started on worker wid.
func (w *Worker) publishRunning(j jobs.Job, wid string) {
	if !w.announces() {
		return
	}
	w.publish(events.Event{ID: eventID(j, events.TypeJobRunning), Type: events.TypeJobRunning, JobID: j.ID,
		Attempt: j.Attempt, Runs: j.Runs, State: jobs.StateRunning, Queue: j.Queue, Worker: wid, Time: j.StartedAt,
		Data: events.JobStart{Pool: w.opts.Pool, ResumeFrom: j.Checkpoint, Class: string(j.Spec.Class),
			// This attempt's wait in its queue: submit to start for the
			// first attempt, the metrics' elastic wait.
			Wait: max(j.StartedAt.Sub(j.QueuedAt), 0)}.Data()})
}

// run executes the attempt and returns how it ended.
func (w *Worker) run(r *running) outcome {
	ckDir := filepath.Join(w.opts.CheckpointDir, r.job.ID)
	out := newOutput(w.logs, w.opts.LogDir, r.job.ID, r.job.Attempt, w.opts.LogLines,
		func(c string) { w.recordCheckpoint(r, c) },
		r.job.Spec.Metric, func(v float64) { w.recordMetric(r, v) })
	defer out.close()
	if r.job.Spec.Handler != "" {
		if res := w.restoreCheckpoint(r, ckDir, nil); res.err != nil || res.stop != "" {
			return res
		}
		return w.runHandler(r, out, ckDir)
	}
	if len(r.job.Spec.Command) == 0 {
		return outcome{err: errors.New("the job has neither command nor handler")}
	}
	// Checkpoints are the job's data: only the user it runs as may read
	// them (the worker's, without run_as).
	ru := w.users.of(r.job)
	// Restored first: the restore swaps the whole directory in.
	if res := w.restoreCheckpoint(r, ckDir, ru); res.err != nil || res.stop != "" {
		return res
	}
	if err := ownCheckpointDir(ckDir, ru); err != nil {
		return outcome{err: fmt.Errorf("checkpoint dir: %w", err)}
	}
	return w.runProcess(r, out, ckDir, ru)
}

// runHandler runs an in-process Go handler.
func (w *Worker) runHandler(r *running, out *output, ckDir string) outcome {
	h, ok := w.opts.Handlers[r.job.Spec.Handler]
	if !ok {
		return outcome{err: fmt.Errorf("no handler %q is registered on this worker", r.job.Spec.Handler)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.job.Spec.Timeout.Std())
	defer cancel()
	stdout := out.writer("stdout")
	run := &Run{JobID: r.job.ID, Attempt: r.job.Attempt, Params: r.job.Spec.Params, ResumeFrom: r.job.Checkpoint,
		CheckpointDir: ckDir, GPUs: r.gpus, Output: stdout, checkpoint: func(c string) error { w.recordCheckpoint(r, c); return nil },
		metric: func(v float64) error { w.recordMetric(r, v); return nil }}
	if r.gang != nil {
		run.Replica, run.Replicas, run.Coordinator = r.gang.member, r.gang.members, r.gang.coordinator
	}
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("handler panicked: %v", p)
			}
		}()
		done <- h(ctx, run)
	}()
	var res outcome
	select {
	case err := <-done:
		res = handlerOutcome(err)
	case <-r.stopped:
		res = stopHandler(r, done, cancel)
	case <-ctx.Done():
		res = waitHandler(done, r.job.Spec.Grace.Std())
		res.stop = stopTimeout
	}
	stdout.Flush()
	return res
}

// stopHandler ends a handler the worker was asked to stop; like stopProcess,
// a preemption yields to a handler that has already returned.
func stopHandler(r *running, done chan error, cancel context.CancelFunc) outcome {
	why := r.reason()
	if why == stopPreempt || why == stopFenced {
		select {
		case err := <-done:
			return handlerOutcome(err)
		default:
		}
	}
	cancel()
	res := waitHandler(done, r.graceFor(why))
	res.stop = why
	return res
}

func waitHandler(done chan error, grace time.Duration) outcome {
	select {
	case err := <-done:
		return handlerOutcome(err)
	case <-time.After(grace):
		// A Go function cannot be killed; the slot is freed and the
		// goroutine is left to notice its cancelled context.
		return outcome{killed: true, err: errors.New("handler ignored cancellation past its grace period")}
	}
}

func handlerOutcome(err error) outcome {
	code := 0
	if err != nil {
		code = 1
		return outcome{exitCode: &code, err: err}
	}
	return outcome{exitCode: &code}
}

// recordCheckpoint stores a checkpoint of a running attempt. With a
// checkpoint store the directory is uploaded first and the token is
// recorded by the commit (ckupload.go).
func (w *Worker) recordCheckpoint(r *running, c string) {
	r.mu.Lock()
	u := r.uploads
	r.mu.Unlock()
	if u != nil {
		u.report(c)
		return
	}
	if w.opts.CheckpointStore != nil {
		return // a gang's other member: member 0 checkpoints the gang
	}
	r.setCheckpoint(c)
	if r.peer() {
		return // a gang's checkpoint is member 0's
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ok, err := w.attempts.Checkpoint(ctx, r.job, r.worker, c)
	if err != nil || !ok {
		w.log.Warn("checkpoint not recorded", "job", r.job.ID, "attempt", r.job.Attempt, "fenced", !ok, "err", err)
		return
	}
	w.publish(events.Event{ID: events.NewID(), Type: events.TypeJobCheckpoint, JobID: r.job.ID, Attempt: r.job.Attempt,
		State: jobs.StateRunning, Worker: r.worker, Time: w.opts.Now(), Data: events.CheckpointData(c)})
}

// recordMetric stores a metric value of a running attempt. A value Redis
// could not take is logged, not fatal: the metric informs the sweep, the
// job's work is what matters, and failing it over a Redis blip would throw
// that work away.
func (w *Worker) recordMetric(r *running, v float64) {
	if r.peer() {
		return // a gang reports through member 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ok, err := w.attempts.ReportMetric(ctx, r.job, r.worker, v)
	if err != nil || !ok {
		w.log.Warn("metric not recorded", "job", r.job.ID, "attempt", r.job.Attempt, "value", v, "fenced", !ok, "err", err)
	}
}

func eventID(j jobs.Job, t events.Type) string { return events.JobEventID(j.ID, j.Attempt, t) }
