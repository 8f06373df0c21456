package workers

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/queues/checkpoints"
	"github.com/ballastdev/ballast/workers/checkpoint"
)

// collectEvery bounds how often one attempt collects its job's
// unreferenced checkpoint objects: a collection lists every object of the
// job, and nothing is old enough to go before the store's grace anyway.
const collectEvery = 10 * time.Minute

// uploads sends one attempt's checkpoints to the store, beside the job:
// each report is saved (chunks, manifest, fenced commit) in one goroutine,
// in report order, and a newer report cancels the save in flight, which
// then commits nothing. Only a commit makes the token the attempt's
// resume point.
type uploads struct {
	w     *Worker
	r     *running
	dir   string
	saver *checkpoint.Saver

	// ctx ends every save: cancelled when the attempt's uploads are
	// abandoned (finish).
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	next      string // the newest report not yet taken by the loop
	hasNext   bool
	looping   bool
	cancelCur context.CancelFunc // the save in flight's
	reported  string             // the newest token reported
	committed string             // the newest token committed
	collected time.Time
}

func newUploads(w *Worker, r *running, dir string, saver *checkpoint.Saver, committed string) *uploads {
	ctx, cancel := context.WithCancel(context.Background())
	return &uploads{w: w, r: r, dir: dir, saver: saver, ctx: ctx, cancel: cancel, reported: committed, committed: committed}
}

// report takes a checkpoint the job reported; it never waits for the store.
func (u *uploads) report(token string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if token == u.reported || u.ctx.Err() != nil {
		return // the marker file repeating the last line, or too late
	}
	u.reported = token
	u.next, u.hasNext = token, true
	if u.cancelCur != nil {
		u.cancelCur() // superseded: the newest checkpoint is the one that matters
	}
	if !u.looping {
		u.looping = true
		u.wg.Add(1)
		go u.loop()
	}
}

func (u *uploads) loop() {
	defer u.wg.Done()
	for {
		u.mu.Lock()
		if !u.hasNext || u.ctx.Err() != nil {
			u.looping = false
			u.mu.Unlock()
			return
		}
		token := u.next
		u.hasNext = false
		ctx, cancel := context.WithCancel(u.ctx)
		u.cancelCur = cancel
		u.mu.Unlock()

		// A handler's directory is made on demand: it may report a
		// checkpoint without writing a file.
		_ = os.MkdirAll(u.dir, 0o700)
		saved, err := u.saver.Save(ctx, u.dir, token)
		cancel()
		u.mu.Lock()
		u.cancelCur = nil
		if err == nil {
			u.committed = token
		}
		u.mu.Unlock()
		u.settled(token, saved, err, ctx.Err() != nil)
	}
}

// settled reports how the save of token ended.
func (u *uploads) settled(token string, saved *checkpoint.Saved, err error, cancelled bool) {
	w, r := u.w, u.r
	switch {
	case err == nil:
		r.setCheckpoint(token)
		m := saved.Manifest
		files := 0
		for _, e := range m.Entries {
			if e.Kind == checkpoint.KindFile {
				files++
			}
		}
		w.publish(events.CheckpointTransfer{JobID: r.job.ID, Attempt: r.job.Attempt, Worker: r.worker, Token: token,
			Manifest: saved.Key, Size: m.Size, Bytes: m.Uploaded, Duration: saved.Duration, Files: files,
			Time: w.opts.Now()}.CommitEvent())
		u.recordTook(saved.Duration)
		u.collect()
	case errors.Is(err, checkpoints.ErrFenced):
		w.log.Warn("checkpoint commit refused: the attempt moved on", "job", r.job.ID, "attempt", r.job.Attempt, "checkpoint", token, "err", err)
		w.publish(events.CheckpointSetback{JobID: r.job.ID, Attempt: r.job.Attempt, Worker: r.worker, Token: token,
			Reason: err.Error(), Time: w.opts.Now()}.RefusedEvent())
	case cancelled || errors.Is(err, checkpoint.ErrSuperseded):
		// A newer report took over, or the attempt ended (finish says
		// what that leaves).
	default:
		w.log.Warn("checkpoint not uploaded; the job keeps its previous one", "job", r.job.ID, "attempt", r.job.Attempt,
			"checkpoint", token, "err", err)
	}
}

// collect deletes the job's checkpoint objects no kept commit names, at
// most every collectEvery per attempt, beside the uploads.
func (u *uploads) collect() {
	u.mu.Lock()
	now := u.w.opts.Now()
	due := now.Sub(u.collected) >= collectEvery
	if due {
		u.collected = now
	}
	u.mu.Unlock()
	if !due {
		return
	}
	w, id := u.w, u.r.job.ID
	ledger := w.checkpoints.Ledger(u.r.worker)
	opts := w.opts.CheckpointOptions
	grace := opts.Grace
	if grace <= 0 {
		grace = checkpoint.DefaultGrace
	}
	got, err := checkpoint.Collect(u.ctx, w.opts.CheckpointStore, ledger, id, grace, w.opts.Now())
	if err != nil && u.ctx.Err() == nil {
		w.log.Warn("checkpoint collection failed; the next one tries again", "job", id, "err", err)
		return
	}
	if got.Chunks+got.Manifests > 0 {
		w.log.Info("collected checkpoint objects no kept checkpoint names", "job", id, "chunks", got.Chunks,
			"manifests", got.Manifests, "bytes", got.Bytes)
	}
}

// finish ends the attempt's uploads. With wait, the save in flight may run
// until deadline (the job's grace); then, or at once without wait, it is
// cancelled and commits nothing. It returns the newest token reported
// and not committed ("" when all were), and the one committed.
func (u *uploads) finish(wait bool, deadline time.Time) (lost, committed string) {
	done := make(chan struct{})
	go func() { u.wg.Wait(); close(done) }()
	if wait {
		t := time.NewTimer(max(deadline.Sub(u.w.opts.Now()), 0))
		select {
		case <-done:
		case <-t.C:
		}
		t.Stop()
	}
	u.mu.Lock()
	u.cancel()
	u.mu.Unlock()
	<-done
	u.saver.Close()
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.reported != u.committed {
		lost = u.reported
	}
	return lost, u.committed
}

// recordTook notes a commit's upload time in Redis, for the simulator's
// measured checkpoint overhead. Losing one costs a sample, not the
// checkpoint.
func (u *uploads) recordTook(took time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	if err := u.w.checkpoints.RecordUpload(ctx, took); err != nil {
		u.w.log.Warn("checkpoint upload time not recorded", "job", u.r.job.ID, "err", err)
	}
}

// recordTimeout bounds noting one upload time.
const recordTimeout = 5 * time.Second
