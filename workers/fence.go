package workers

import (
	"context"
	"time"
)

// Self-fencing: a worker that cannot renew its registration stops its own
// jobs before the controller could run them elsewhere.
//
// The controller declares a worker dead when its registry entry is older
// than the worker TTL, and requeues its attempts as new ones. A worker cut
// off from Redis (a partition, a dead link) cannot be told; without this it
// runs its jobs on beside the attempts that replaced them, and their side
// effects happen twice. So the worker watches its own renewals: FenceAfter
// of the TTL after the last heartbeat that reached Redis it stops taking
// work and sends SIGTERM to its jobs, and KillAfter it kills their process
// trees, both before the TTL runs out. The time is counted from when that
// heartbeat was sent (its registry timestamp is no earlier), on the
// worker's own clock, which is monotonic when it is time.Now.
//
// A Redis that is down for everyone looks the same from here, and fences
// too: the controller would not have requeued anything (it waits for Redis
// to answer for a TTL first), so the stopped attempts are handed back by
// the worker itself once Redis answers, through the same fenced requeue a
// drain uses. Either way each attempt ends once: the requeue that finds its
// attempt moved on changes nothing.

// fenceTiming is the self-fencing policy: pure, with time passed in.
type fenceTiming struct {
	ttl time.Duration
	// at is the share of ttl after which the worker fences; 0 or less
	// turns self-fencing off.
	at float64
}

// on reports whether self-fencing is on.
func (f fenceTiming) on() bool { return f.at > 0 && f.ttl > 0 }

// fenceAfter is how long after the last renewal the worker stops taking
// work and asks its jobs to stop.
func (f fenceTiming) fenceAfter() time.Duration { return time.Duration(float64(f.ttl) * f.at) }

// killAfter is how long after the last renewal the jobs' process trees are
// killed: half way from the fence to the TTL. The other half is the margin
// for the kill itself and for the controller's clock running ahead of the
// worker's.
func (f fenceTiming) killAfter() time.Duration {
	a := f.fenceAfter()
	return a + (f.ttl-a)/2
}

// fenceState is where a worker stands at now, its last renewal at renewed.
type fenceState struct {
	fenced bool
	// grace is what is left of the time to kill (0 once it passed): the
	// longest a stopping job may take over SIGTERM.
	grace time.Duration
	// kill is true once the kill time passed.
	kill bool
}

// state is the policy itself.
func (f fenceTiming) state(renewed, now time.Time) fenceState {
	if !f.on() {
		return fenceState{}
	}
	since := now.Sub(renewed)
	if since < f.fenceAfter() {
		return fenceState{}
	}
	left := f.killAfter() - since
	return fenceState{fenced: true, grace: max(left, 0), kill: left <= 0}
}

// checkEvery is how often the watchdog looks: a tenth of the time between
// the fence and the kill, so the kill comes at most that late into the
// margin before the TTL, and never slower than 100 ms.
func (f fenceTiming) checkEvery() time.Duration {
	return min(max((f.killAfter()-f.fenceAfter())/10, 5*time.Millisecond), 100*time.Millisecond)
}

// fencing is the worker's self-fencing state, guarded by Worker.mu.
type fencing struct {
	timing fenceTiming
	// renewed is when the last heartbeat that reached Redis was sent.
	renewed time.Time
	// since is when the current fence began; zero while not fenced.
	since time.Time
	// count and total are the fences of this process and the time spent
	// in them (the current one not included), for the registry and the
	// ballast_worker_self_fences metrics.
	count int
	total time.Duration
}

// renewedAt records a heartbeat, sent at sent, that Redis took.
func (w *Worker) renewedAt(sent time.Time) {
	w.mu.Lock()
	if sent.After(w.fence.renewed) {
		w.fence.renewed = sent
	}
	w.mu.Unlock()
	// Lift a fence at once, rather than at the next look.
	w.checkFence()
}

// selfFenced reports whether the worker is fenced now, so it takes no work.
func (w *Worker) selfFenced() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.fence.since.IsZero()
}

// fenceLoop is the watchdog. It runs apart from the heartbeat loop, whose
// beat may hang on an unanswering Redis for longer than the fence allows.
func (w *Worker) fenceLoop(ctx context.Context) {
	if !w.fence.timing.on() {
		return
	}
	t := time.NewTicker(w.fence.timing.checkEvery())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.checkFence()
		}
	}
}

// checkFence begins, carries out or lifts the fence, as the time since the
// last renewal says.
func (w *Worker) checkFence() {
	now := w.opts.Now()
	w.mu.Lock()
	st := w.fence.timing.state(w.fence.renewed, now)
	began, lifted := false, time.Duration(0)
	switch {
	case st.fenced && w.fence.since.IsZero():
		w.fence.since, w.fence.count, began = now, w.fence.count+1, true
	case !st.fenced && !w.fence.since.IsZero():
		lifted = max(now.Sub(w.fence.since), time.Nanosecond)
		w.fence.total += lifted
		w.fence.since = time.Time{}
	}
	n := 0
	if st.fenced {
		// Every attempt here, also one claimed after the fence began (a
		// claim already under way), stops; the first reason wins, so an
		// attempt already stopping keeps its own, and only the kill below
		// bounds it.
		for _, r := range w.jobs {
			r.fenceStop(st.grace)
			if st.kill {
				r.fenceKill()
			}
			n++
		}
	}
	renewed := w.fence.renewed
	w.mu.Unlock()
	switch {
	case began:
		w.log.Warn("self-fenced: cannot renew the registration; stopped taking work and stopping running jobs before the controller could requeue them",
			"last_renewal_ago", now.Sub(renewed).Round(time.Millisecond), "worker_ttl", w.fence.timing.ttl,
			"running", n, "kill_in", st.grace.Round(time.Millisecond))
	case lifted > 0:
		w.log.Info("self-fence lifted: the registration is renewed; taking work again", "fenced_for", lifted.Round(time.Millisecond))
	}
}

// fenceReport is what info() says of the fences: their count and the
// seconds spent in them, the current one included.
func (w *Worker) fenceReport(now time.Time) (int, float64) {
	total := w.fence.total
	if !w.fence.since.IsZero() {
		total += now.Sub(w.fence.since)
	}
	return w.fence.count, total.Seconds()
}
