package workers

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/ballastdev/ballast/internal/retry"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// settle records how an attempt ended: finished, retried as a new attempt, or
// requeued (drain, preemption). Redis errors are retried: the result of work
// that ran must not be dropped because Redis blinked. It returns the
// attempt's outcome for its span (see the outcome* constants).
func (w *Worker) settle(r *running, res outcome) string {
	j := r.job
	now := w.opts.Now()
	switch {
	case res.stop == stopLost:
		why, _ := w.whyNotRecorded(j.ID)
		w.log.Info("stopped a job: "+why, "job", j.ID, "attempt", j.Attempt)
		return outcomeLost
	case res.stop == stopCancel:
		w.finish(r, jobs.StateCancelled, res.exitCode, "cancelled by user")
		return outcomeCancelled
	case (res.stop == stopDrain || res.stop == stopFenced) && r.peer() && w.askGangPreempt(r):
		// Member 0 checkpoints the gang and requeues it; this member's
		// part of the attempt is over.
		w.log.Info("stopped: asked member 0 to checkpoint and requeue the gang", "job", j.ID, "attempt", j.Attempt, "why", res.stop)
		return outcomeRequeued
	case res.stop == stopDrain || res.stop == stopFenced:
		// A fenced attempt is handed back here once Redis answers, unless
		// the controller's recovery moved it on first: then this finds it
		// moved and changes nothing.
		why, record := "worker draining", "worker "+r.worker+" draining"
		if res.stop == stopFenced {
			why, record = "worker self-fenced", "worker "+r.worker+" could not renew its registration (self-fenced)"
		}
		var moved queues.Requeued
		w.retryRedis("requeue", func(ctx context.Context) (err error) {
			moved, err = w.attempts.Requeue(ctx, j, r.worker, queues.Requeue{Reason: record})
			return err
		})
		if res.stop == stopFenced && moved.Attempt == 0 && !moved.Cancelled {
			w.log.Info("a self-fenced job had already been requeued by the controller", "job", j.ID, "attempt", j.Attempt)
		}
		w.announceRequeue(r, moved, why, now, events.JobRequeue{ResumeFrom: r.lastCheckpoint()})
		return requeueOutcome(moved, outcomeRequeued)
	case res.stop == stopPreempt:
		// The queue and reason come from the request in the record, read
		// in the same script that moves the job: the NATS message that may
		// have woken us carries neither, so a stale one cannot misroute.
		var moved queues.Requeued
		w.retryRedis("preempt", func(ctx context.Context) (err error) {
			moved, err = w.attempts.Requeue(ctx, j, r.worker, queues.Requeue{Preempt: true, Spot: r.spotReclaimed()})
			return err
		})
		if moved.Attempt == 0 && !moved.Cancelled {
			w.log.Warn("preemption not recorded: "+w.whyUnrecorded(), "job", j.ID, "attempt", j.Attempt)
		}
		w.announceRequeue(r, moved, moved.Reason, now,
			events.JobRequeue{Preempted: true, To: string(moved.Queue), Checkpoint: r.lastCheckpoint(), Killed: res.killed})
		return requeueOutcome(moved, outcomePreempted)
	case res.succeeded():
		w.finish(r, jobs.StateSucceeded, res.exitCode, "")
		return outcomeSucceeded
	}
	reason := failureReason(res)
	if j.Spec.Retries(res.exitCode, j.Retries) {
		var moved queues.Requeued
		w.retryRedis("retry", func(ctx context.Context) (err error) {
			moved, err = w.attempts.Requeue(ctx, j, r.worker, queues.Requeue{Retry: true, Reason: reason,
				NotBefore: now.Add(w.opts.backoff(j.Retries))})
			return err
		})
		w.announceRequeue(r, moved, reason, now, events.JobRequeue{ResumeFrom: r.lastCheckpoint()})
		return outcomeFailed
	}
	if j.Spec.Retryable && res.exitCode != nil && slices.Contains(j.Spec.NoRetryExitCodes, *res.exitCode) {
		reason += " (listed in no_retry_exit_codes: not retried)"
	}
	w.finish(r, jobs.StateFailed, res.exitCode, reason)
	return outcomeFailed
}

func failureReason(res outcome) string {
	switch {
	case res.stop == stopTimeout:
		return "timed out"
	case res.err != nil:
		return res.err.Error()
	case res.exitCode != nil && *res.exitCode < 0:
		return "killed by a signal"
	case res.exitCode != nil:
		return fmt.Sprintf("exited with code %d", *res.exitCode)
	}
	return "failed"
}

func (w *Worker) finish(r *running, state jobs.State, code *int, msg string) {
	var ok bool
	ended := queues.Ended{JobID: r.job.ID, Attempt: r.job.Attempt, Worker: r.worker, Member: -1, State: state, ExitCode: code, Error: msg}
	if r.gang != nil {
		// A member's success ends the job only when it is the last.
		var end queues.MemberEnd
		w.retryRedis("finish", func(ctx context.Context) (err error) {
			end, err = w.attempts.FinishMember(ctx, r.job, r.worker, r.gang.member, state, code, msg)
			return err
		})
		if end != queues.MemberFenced {
			ended.Member, ended.At = r.gang.member, w.opts.Now()
			w.ended.add(ended)
		}
		if end == queues.MemberDone {
			w.log.Info("gang member done; the gang runs on", "job", r.job.ID, "attempt", r.job.Attempt, "member", r.gang.member)
			return
		}
		ok = end == queues.JobEnded
	} else {
		w.retryRedis("finish", func(ctx context.Context) (err error) {
			ok, err = w.attempts.Finish(ctx, r.job, r.worker, state, code, msg)
			return err
		})
		if ok {
			ended.At = w.opts.Now()
			w.ended.add(ended)
		}
	}
	if !ok {
		w.unrecordedEnd(r, state, code, msg)
		return
	}
	// The job is over: no attempt will resume from its checkpoints.
	removeCheckpoints(filepath.Join(w.opts.CheckpointDir, r.job.ID))
	w.purgeCheckpoints(r.job.ID)
	if !w.announces() {
		return
	}
	data := events.JobEnd{Class: string(r.job.Spec.Class), ExitCode: code, QoS: qosData(r)}.Data()
	w.publish(events.Event{ID: eventID(r.job, eventType(state)), Type: eventType(state), JobID: r.job.ID,
		Attempt: r.job.Attempt, Runs: r.job.Runs, State: state, Queue: r.job.Queue, Worker: r.worker, Reason: msg, Time: w.opts.Now(), Data: data})
}

// announceRequeue publishes what Requeue did; data goes with a requeued event.
func (w *Worker) announceRequeue(r *running, moved queues.Requeued, reason string, now time.Time, data events.JobRequeue) {
	switch {
	case moved.Cancelled:
		w.publish(events.Event{ID: eventID(r.job, events.TypeJobCancelled), Type: events.TypeJobCancelled, JobID: r.job.ID,
			Attempt: r.job.Attempt, Runs: r.job.Runs, State: jobs.StateCancelled, Worker: r.worker, Reason: reason, Time: now,
			Data: events.JobEnd{Class: string(r.job.Spec.Class)}.Data()})
	case moved.Attempt > 0:
		data.QoS = qosData(r)
		// The queue of the new attempt, which a pending preempt request may
		// have changed even for a drain or a retry.
		q := r.job.Queue
		if moved.Queue != "" {
			q = string(moved.Queue)
		}
		w.publish(events.Event{ID: eventID(r.job, events.TypeJobRequeued), Type: events.TypeJobRequeued, JobID: r.job.ID,
			Attempt: moved.Attempt, Runs: r.job.Runs, State: jobs.StateQueued, Queue: q, Worker: r.worker, Reason: reason, Time: now,
			Data: data.Data()})
	}
}

func eventType(s jobs.State) events.Type {
	switch s {
	case jobs.StateSucceeded:
		return events.TypeJobSucceeded
	case jobs.StateCancelled:
		return events.TypeJobCancelled
	}
	return events.TypeJobFailed
}

// RecordRetryMax is the longest a worker waits between two tries to record
// how an attempt ended: after Redis answers again, every end is recorded
// (or found unrecordable and published as such) within it.
const RecordRetryMax = 5 * time.Second

// retryRedis runs f until it succeeds, backing off up to RecordRetryMax between tries,
// for at most 10 minutes: long enough to ride out a Redis restart. After that
// the controller's recovery owns the job.
func (w *Worker) retryRedis(what string, f func(context.Context) error) {
	// Not a caller's context: the end of an attempt is recorded even as
	// the worker stops. Jitter spreads a fleet's retries after a restart.
	bo := retry.Backoff{Base: 100 * time.Millisecond, Max: RecordRetryMax}
	deadline := w.opts.Now().Add(10 * time.Minute)
	for try := 1; ; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := f(ctx)
		cancel()
		if err == nil {
			return
		}
		if w.opts.Now().After(deadline) {
			w.log.Error("giving up recording a result", "what", what, "err", err)
			return
		}
		delay := bo.Delay(try)
		w.log.Warn("recording a result failed; retrying", "what", what, "err", err, "in", delay)
		_ = bo.Wait(context.Background(), delay)
	}
}

// askGangPreempt asks member 0 of r's gang to checkpoint it and requeue it
// to its own queue, for a member whose worker drains: a requeue by this
// member would throw away the work since member 0's last checkpoint. It
// reports whether the request is recorded (false: the attempt is over or a
// cancel is pending, and the caller requeues itself).
func (w *Worker) askGangPreempt(r *running) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ok, err := w.attempts.RequestGangHandOver(ctx, r.job.ID, r.job.Attempt, queues.Queue(r.job.Queue), "member "+
		strconv.Itoa(r.gang.member)+"'s worker "+r.worker+" draining")
	if err != nil {
		w.log.Warn("gang preempt request failed; requeueing the gang here", "job", r.job.ID, "err", err)
	}
	return ok && err == nil
}

// removeCheckpoints removes a job's checkpoint directory on this machine.
// Most jobs never make one (a handler's is not created for it), so it
// looks first: one system call for a directory that is not there, where
// os.RemoveAll alone makes two or three, and a worker ends every job here.
func removeCheckpoints(dir string) {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return
	}
	_ = os.RemoveAll(dir)
}
