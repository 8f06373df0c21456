package workers

import (
	"context"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// spotNotice handles the provider's warning, recorded in the registry, that
// this worker's machine will be taken at deadline: stop taking work, ask
// every running job to checkpoint and go back to the burst queue (a
// preemption, so it counts against the job's spot budget), wait for them,
// then signal Reclaimed so the process can exit as the machine would.
func (w *Worker) spotNotice(deadline time.Time) {
	w.noticeOnce.Do(func() {
		within := max(deadline.Sub(w.opts.Now()), 0)
		w.log.Warn("spot notice: the provider reclaims this worker; checkpointing and requeueing its jobs", "within", within)
		if w.srv != nil {
			w.srv.Stop()
		}
		w.mu.Lock()
		w.draining = true
		var live []*running
		for _, r := range w.jobs {
			if r.worker == w.ID() {
				live = append(live, r)
			}
		}
		w.mu.Unlock()
		for _, r := range live {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			// The record is the truth: if this fails the job still stops
			// and is requeued to its own queue by the drain path.
			// Back to spot-able elastic work, keeping a region pin.
			to := queues.RegionalQueue(queues.QueueBurst, r.job.Spec.Labels[jobs.RegionLabel])
			request := w.attempts.RequestPreempt
			if r.peer() {
				request = w.attempts.RequestSpotPreempt // member 0 requeues the gang
			}
			if _, err := request(ctx, r.job.ID, r.job.Attempt, to, "spot notice"); err != nil {
				w.log.Warn("spot notice: preempt request not recorded", "job", r.job.ID, "err", err)
			}
			cancel()
			if r.peer() {
				continue // member 0 checkpoints and moves the gang on
			}
			r.markSpot()
			r.stop(stopPreempt)
		}
		w.waitIdle(within)
		close(w.reclaimed)
	})
}

// Reclaimed is closed after a spot notice has been handled: the worker took
// no more work and its jobs were requeued. The process should exit.
func (w *Worker) Reclaimed() <-chan struct{} { return w.reclaimed }

// StopTakingWork puts the worker in draining state without stopping it: no
// new deliveries are fetched, running jobs finish where they are, and the
// registry shows the worker draining so the controller releases it once it
// is empty. Used when elastic capacity is no longer needed.
func (w *Worker) StopTakingWork() {
	w.mu.Lock()
	already := w.draining
	w.draining = true
	w.mu.Unlock()
	if already || w.srv == nil {
		return
	}
	w.srv.Stop()
	w.log.Info("draining on the controller's request: no new work; running jobs finish here", "running", w.Running())
	// Tell the registry now rather than at the next beat.
	select {
	case w.wake <- struct{}{}:
	default:
	}
}
