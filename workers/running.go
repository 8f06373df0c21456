package workers

import (
	"sync"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/workers/gpu"
)

// stopReason says why a worker stopped a job before it exited by itself.
type stopReason string

const (
	stopCancel  stopReason = "cancelled"
	stopLost    stopReason = "lost"     // the attempt is no longer this worker's
	stopDrain   stopReason = "draining" // the worker is stopping
	stopTimeout stopReason = "timeout"
	// stopPreempt: the controller asked to checkpoint the job and run its
	// next attempt elsewhere (queues.Store.RequestPreempt).
	stopPreempt stopReason = "preempted"
	// stopFenced: the worker could not renew its registration and stops
	// its jobs before the controller could requeue them (see fence.go).
	stopFenced stopReason = "fenced"
)

// running is one job in a slot.
type running struct {
	job    jobs.Job
	worker string // the worker ID it was claimed under (the fence)
	// slots is how many of the worker's slots the attempt holds: its
	// GPUs on a GPU worker.
	slots int

	once    sync.Once
	stopped chan struct{}
	mu      sync.Mutex
	why     stopReason
	ckpt    string
	spot    bool // stopped by a spot notice: counts against the spot budget
	// kill ends the job's process tree at once; nil while no process runs.
	kill func()
	// stats are the attempt's cgroup counters, once it ended in one.
	stats *jobs.QoSStats
	// gpus are the devices granted to the attempt (grantDevices), set
	// before it starts and fixed after; nil on a worker without GPUs.
	gpus []gpu.Device
	// share is the thousandths of gpus[0] the attempt shares with others
	// (0: it holds its GPUs whole).
	share int
	// gang is the member's place in its gang; nil for a job that is none.
	gang *gangEnv
	// fenceGrace bounds the grace of an attempt stopped by a self-fence:
	// what is left before its worker's kill time.
	fenceGrace time.Duration
	// fenceKilled is set once a self-fence killed the attempt's tree.
	fenceKilled bool
	// stoppedAt is when the worker asked the job to stop (zero while it
	// was not): its grace, counted from then, covers the last upload.
	stoppedAt time.Time
	// now is the worker's clock (Options.Now), which stoppedAt is read on.
	now func() time.Time
	// uploads send the attempt's checkpoints to the checkpoint store; nil
	// without one, and for a gang's other members (ckstore.go).
	uploads *uploads
}

// peer reports whether r is a gang member other than member 0: its
// checkpoints and metrics are not the gang's, and a preemption is member
// 0's to carry out (it checkpoints; the others stop when the attempt has
// moved on).
func (r *running) peer() bool { return r.gang != nil && r.gang.member > 0 }

func newRunning(j jobs.Job, worker string, now func() time.Time) *running {
	return &running{job: j, worker: worker, stopped: make(chan struct{}), ckpt: j.Checkpoint, now: now}
}

// stop asks the job to stop; the first reason wins.
func (r *running) stop(why stopReason) {
	r.once.Do(func() {
		r.mu.Lock()
		r.why, r.stoppedAt = why, r.now()
		r.mu.Unlock()
		close(r.stopped)
	})
}

// fenceStop stops the job for a self-fence, with at most grace between
// SIGTERM and the kill; a job already stopping keeps its reason.
func (r *running) fenceStop(grace time.Duration) {
	r.once.Do(func() {
		r.mu.Lock()
		r.why, r.fenceGrace, r.stoppedAt = stopFenced, grace, r.now()
		r.mu.Unlock()
		close(r.stopped)
	})
}

// graceFor is how long the job may take over SIGTERM: its template's
// grace, cut to what a self-fence leaves.
func (r *running) graceFor(why stopReason) time.Duration {
	g := r.job.Spec.Grace.Std()
	if why == stopFenced {
		r.mu.Lock()
		g = min(g, r.fenceGrace)
		r.mu.Unlock()
	}
	return g
}

// fenceKill kills the job's process tree at a self-fence's kill time,
// once: the watchdog looks again and again, and the process it killed may
// be reaped, its PID free for another, before the attempt lets go of it.
func (r *running) fenceKill() {
	r.mu.Lock()
	done := r.fenceKilled
	r.fenceKilled = true
	r.mu.Unlock()
	if !done {
		r.killNow()
	}
}

// setKill registers how to kill the job's process tree (nil: none runs).
func (r *running) setKill(f func()) {
	r.mu.Lock()
	r.kill = f
	r.mu.Unlock()
}

// killNow kills the job's process tree, if a process runs, without waiting
// for the goroutine that runs it to notice a stop.
func (r *running) killNow() {
	r.mu.Lock()
	f := r.kill
	r.mu.Unlock()
	if f != nil {
		f()
	}
}

func (r *running) reason() stopReason {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.why
}

// markSpot records that the spot market, not the controller, takes the job.
func (r *running) markSpot() {
	r.mu.Lock()
	r.spot = true
	r.mu.Unlock()
}

func (r *running) spotReclaimed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.spot
}

func (r *running) setStats(s jobs.QoSStats) {
	r.mu.Lock()
	r.stats = &s
	r.mu.Unlock()
}

func (r *running) qosStats() *jobs.QoSStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

func (r *running) lastCheckpoint() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ckpt
}

func (r *running) setCheckpoint(c string) {
	r.mu.Lock()
	r.ckpt = c
	r.mu.Unlock()
}

// outcome is how an attempt ended.
type outcome struct {
	exitCode *int
	err      error      // could not start, or the handler returned an error
	stop     stopReason // set when the worker stopped it
	killed   bool       // the grace period ran out
}

func (o outcome) succeeded() bool {
	return o.stop == "" && o.err == nil && o.exitCode != nil && *o.exitCode == 0
}
