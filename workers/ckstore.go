package workers

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/workers/checkpoint"
	"github.com/ballastdev/ballast/workers/runas"
)

// With Options.CheckpointStore set, a job's checkpoint directory travels:
//
//   - before an attempt starts, the newest checkpoint committed by an
//     earlier attempt is restored into the directory (staged beside it,
//     every hash checked, then swapped in; files already in place are not
//     downloaded), falling back to older ones over a corrupt one, and the
//     attempt's BALLAST_RESUME_FROM is the token of the checkpoint
//     restored, not merely the newest one recorded;
//   - each checkpoint the job reports is uploaded beside it and committed
//     fenced (ckupload.go); only the commit makes it the resume point;
//   - when the attempt ends, the last upload may finish within the job's
//     grace if another attempt will resume from it, and the checkpoints
//     of a job that ended are deleted from the store.
//
// The store's credentials are the worker's: the SDKs find them in the
// worker's environment and files, and a job's environment is built
// without them (environment.go).

// restoreGate lets the members of a gang that share this worker restore
// their common directory once: a second restore would swap the directory
// under a member already running in it.
type restoreGate struct {
	attempt int
	done    chan struct{}
	res     restored
}

// restored is what a restore put in place for an attempt.
type restored struct {
	// base is the checkpoint restored (nil: none), token its token.
	base  *checkpoint.Manifest
	token string
	err   error
	// stopped: the worker stopped the attempt while it restored.
	stopped bool
}

// restoreCheckpoint restores r's job's newest checkpoint of an earlier
// attempt into dir, for the job to run as ru, and sets the attempt's
// resume point and uploads. A store that cannot be reached fails the
// attempt (it retries as any start failure does) rather than start it
// from less than its checkpoint.
func (w *Worker) restoreCheckpoint(r *running, dir string, ru *runas.User) outcome {
	if w.opts.CheckpointStore == nil {
		return outcome{}
	}
	var res restored
	if r.gang != nil {
		res = w.restoreShared(r, dir, ru)
	} else {
		res = w.restoreInto(r, dir, ru)
	}
	if res.stopped {
		return outcome{stop: r.reason()}
	}
	if res.err != nil {
		return outcome{err: res.err}
	}
	r.job.Checkpoint = res.token
	r.setCheckpoint(res.token)
	if r.peer() {
		return outcome{} // member 0 checkpoints the gang
	}
	saver, err := checkpoint.NewSaver(w.opts.CheckpointStore, w.checkpoints.Ledger(r.worker), r.job.ID, r.job.Attempt,
		res.base, w.opts.CheckpointOptions)
	if err != nil {
		return outcome{err: fmt.Errorf("checkpoint store: %w", err)}
	}
	r.mu.Lock()
	r.uploads = newUploads(w, r, dir, saver, res.token)
	r.mu.Unlock()
	return outcome{}
}

// restoreShared restores once per attempt for the members of a gang on
// this worker; the others wait for the first and take its result. The
// gate stays until no attempt of the job runs here (forgetGate).
func (w *Worker) restoreShared(r *running, dir string, ru *runas.User) restored {
	w.mu.Lock()
	if w.restoreGates == nil {
		w.restoreGates = map[string]*restoreGate{}
	}
	g := w.restoreGates[r.job.ID]
	first := g == nil || g.attempt != r.job.Attempt
	if first {
		g = &restoreGate{attempt: r.job.Attempt, done: make(chan struct{})}
		w.restoreGates[r.job.ID] = g
	}
	w.mu.Unlock()
	if first {
		g.res = w.restoreInto(r, dir, ru)
		close(g.done)
		return g.res
	}
	select {
	case <-g.done:
		return g.res
	case <-r.stopped:
		return restored{stopped: true}
	}
}

// forgetGate drops jobID's restore gate once no attempt of it runs here.
// Called with w.mu held.
func (w *Worker) forgetGate(jobID string) {
	if w.restoreGates[jobID] == nil {
		return
	}
	for _, other := range w.jobs {
		if other.job.ID == jobID {
			return
		}
	}
	delete(w.restoreGates, jobID)
}

// restoreInto does the restore for one attempt.
func (w *Worker) restoreInto(r *running, dir string, ru *runas.User) restored {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-r.stopped:
			cancel()
		case <-ctx.Done():
		}
	}()
	j := r.job
	keys, err := w.checkpoints.Ledger(r.worker).Committed(ctx, j.ID)
	if err != nil {
		return w.restoreFailed(ctx, r, fmt.Errorf("checkpoint store: list the job's checkpoints: %w", err))
	}
	keys = checkpoint.Earlier(keys, j.Attempt)
	if len(keys) == 0 {
		// Never committed to a store (a fresh job, or a token recorded
		// before the store was configured): the directory is as it is.
		return restored{token: j.Checkpoint}
	}
	opts := checkpoint.RestoreOptions{Concurrency: w.opts.CheckpointOptions.Concurrency, Now: w.opts.Now, OnFallback: func(f checkpoint.Fallback) {
		w.log.Warn("checkpoint could not be restored; falling back to the one before", "job", j.ID, "attempt", j.Attempt,
			"manifest", f.Key, "err", f.Err)
	}}
	res, err := checkpoint.Restore(ctx, w.opts.CheckpointStore, j.ID, keys, dir, opts)
	fellBack := func(resumeFrom string) {
		for _, f := range res.Fallbacks {
			w.publish(events.CheckpointSetback{JobID: j.ID, Attempt: j.Attempt, Worker: r.worker, Cause: events.FallbackCorrupt,
				Manifest: f.Key, ResumeFrom: resumeFrom, Reason: f.Err.Error(), Time: w.opts.Now()}.FallbackEvent())
		}
	}
	if errors.Is(err, checkpoint.ErrNoCheckpoint) {
		// Every kept checkpoint failed. If the store answers, they are
		// gone for good and the job starts afresh, with an empty
		// directory that matches its empty resume point; if it does
		// not, this worker cannot tell, and the attempt waits for a
		// store that answers.
		if ok, aerr := w.opts.CheckpointStore.Bucket().IsAccessible(ctx); !ok || aerr != nil {
			return w.restoreFailed(ctx, r, fmt.Errorf("checkpoint store unreachable: %v (%w)", aerr, err))
		}
		fellBack("")
		if err := emptyDir(dir); err != nil {
			return restored{err: fmt.Errorf("checkpoint dir: %w", err)}
		}
		w.log.Warn("no checkpoint of the job could be restored: it starts afresh", "job", j.ID, "attempt", j.Attempt, "err", err)
		w.publish(events.CheckpointSetback{JobID: j.ID, Attempt: j.Attempt, Worker: r.worker, Cause: events.FallbackNone,
			Token: j.Checkpoint, Reason: err.Error(), Time: w.opts.Now()}.FallbackEvent())
		return restored{}
	}
	if err != nil {
		return w.restoreFailed(ctx, r, fmt.Errorf("checkpoint restore: %w", err))
	}
	m := res.Manifest
	fellBack(m.Token)
	if ru != nil {
		if err := chownTree(dir, ru); err != nil {
			return restored{err: fmt.Errorf("checkpoint dir: %w", err)}
		}
	}
	files := 0
	for _, e := range m.Entries {
		if e.Kind == checkpoint.KindFile {
			files++
		}
	}
	w.log.Info("checkpoint restored", "job", j.ID, "attempt", j.Attempt, "checkpoint", m.Token, "bytes", res.Downloaded,
		"reused_files", res.ReusedFiles, "took", res.Duration)
	w.publish(events.CheckpointTransfer{JobID: j.ID, Attempt: j.Attempt, Worker: r.worker, Token: m.Token, Manifest: res.Key,
		Size: m.Size, Bytes: res.Downloaded, Duration: res.Duration, Files: files, Reused: res.ReusedFiles,
		Time: w.opts.Now()}.RestoreEvent())
	return restored{base: m, token: m.Token}
}

// restoreFailed is err, unless the worker stopped the attempt meanwhile.
func (w *Worker) restoreFailed(ctx context.Context, r *running, err error) restored {
	if ctx.Err() != nil {
		select {
		case <-r.stopped:
			return restored{stopped: true}
		default:
		}
	}
	w.log.Warn("checkpoint not restored; the attempt does not start", "job", r.job.ID, "attempt", r.job.Attempt, "err", err)
	return restored{err: err}
}

// endUploads ends r's uploads before the attempt is settled. An attempt
// that another will resume (stopped, or failed with a retry left) lets the
// last upload finish within its grace, counted from the stop; one that
// cannot is cancelled, commits nothing, and an event says which
// checkpoint the next attempt gets instead. A job that ended has its
// checkpoints deleted from the store once its end is recorded (finish).
func (w *Worker) endUploads(r *running, res outcome) {
	r.mu.Lock()
	u := r.uploads
	stoppedAt := r.stoppedAt
	r.mu.Unlock()
	if u == nil {
		return
	}
	resumed := res.stop == stopDrain || res.stop == stopFenced || res.stop == stopPreempt ||
		(res.stop != stopCancel && res.stop != stopLost && !res.succeeded() && r.job.Spec.Retries(res.exitCode, r.job.Retries))
	deadline := w.opts.Now().Add(r.job.Spec.Grace.Std())
	if !stoppedAt.IsZero() {
		deadline = stoppedAt.Add(r.graceFor(res.stop))
	}
	lost, committed := u.finish(resumed, deadline)
	if lost == "" || !resumed {
		return
	}
	w.log.Warn("the last checkpoint did not finish uploading within the grace: the next attempt resumes from the one before",
		"job", r.job.ID, "attempt", r.job.Attempt, "checkpoint", lost, "resume_from", committed)
	w.publish(events.CheckpointSetback{JobID: r.job.ID, Attempt: r.job.Attempt, Worker: r.worker, Cause: events.FallbackUnfinished,
		Token: lost, ResumeFrom: committed, Reason: "upload did not finish within the job's grace", Time: w.opts.Now()}.FallbackEvent())
}

// purgeCheckpoints deletes an ended job's checkpoints from the store,
// beside the worker's other work; Stop waits a while for the last ones.
func (w *Worker) purgeCheckpoints(jobID string) {
	if w.opts.CheckpointStore == nil {
		return
	}
	w.purges.Add(1)
	go func() {
		defer w.purges.Done()
		ctx, cancel := context.WithTimeout(context.Background(), purgeTimeout)
		defer cancel()
		if _, err := checkpoint.Purge(ctx, w.opts.CheckpointStore, jobID); err != nil {
			// Left behind, the objects cost storage, not correctness;
			// the ledger stays so that they can still be found.
			w.log.Warn("checkpoints of an ended job not deleted from the store", "job", jobID, "err", err)
			return
		}
		if _, err := w.checkpoints.Forget(ctx, jobID); err != nil {
			w.log.Warn("the ended job's list of checkpoints not dropped", "job", jobID, "err", err)
		}
	}()
}

// purgeTimeout bounds deleting one ended job's checkpoints.
const purgeTimeout = time.Minute

// waitPurges waits up to d for the deletions in flight.
func (w *Worker) waitPurges(d time.Duration) {
	done := make(chan struct{})
	go func() { w.purges.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		w.log.Warn("stopping with checkpoint deletions in flight; the objects stay in the store")
	}
}

// cleanStaging removes the restore staging directories a worker that
// died mid-restore left in the checkpoint root: each can be as big as a
// checkpoint, and nothing else would ever remove them. Those of a worker
// process still running on the same root are kept.
func (w *Worker) cleanStaging() {
	// The wall clock, not Options.Now: the directories' ages are read
	// from modification times the kernel stamps with it.
	removed, err := checkpoint.CleanStaging(w.opts.CheckpointDir, nil, time.Now())
	if len(removed) > 0 {
		w.log.Info("removed staging directories of interrupted checkpoint restores", "dirs", removed)
	}
	if err != nil {
		w.log.Warn("staging directories of interrupted checkpoint restores not all removed", "root", w.opts.CheckpointDir, "err", err)
	}
}

// emptyDir leaves dir empty (or absent): a job that starts afresh must
// not find files its resume point does not name.
func emptyDir(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return os.RemoveAll(dir)
}

// chownTree gives what a restore put in dir to ru. Nothing else runs in
// dir yet, and links are changed, never followed (Lchown; WalkDir does not
// descend through them).
func chownTree(dir string, ru *runas.User) error {
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(ru.UID), int(ru.GID))
	})
}
