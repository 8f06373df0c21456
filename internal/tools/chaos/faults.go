package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/workers"
)

// injected is one fault as it was carried out.
type injected struct {
	fault  Fault
	at     time.Time // when it struck (the kill, the pause, the stop)
	target string
	lasted time.Duration
	// running holds the attempts running where it struck: on the killed
	// worker, or anywhere for a Redis pause.
	running map[attemptKey]bool
	// effectsBefore is how many side-effect lines had been written when a
	// worker was killed: an attempt of the victim whose line is among them
	// completed its work before the kill.
	effectsBefore int
	requeue       []time.Duration
	// held are the victim's deliveries taken from asynq but not yet
	// claimed when it died (see unclaimed).
	held    map[attemptKey]bool
	note    string
	problem string
}

// schedule lists the faults to inject, in an order drawn from the seed.
func schedule(o Options, rng *rand.Rand) []Fault {
	var list []Fault
	for _, f := range o.Faults {
		n := 1
		if f == FaultWorkerKill {
			n = o.WorkerKills
		}
		for range n {
			list = append(list, f)
		}
	}
	rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	return list
}

// expected is about how long a fault takes from strike to settled, used to
// pace the submissions over the whole schedule.
func (o Options) expected(f Fault) time.Duration {
	switch f {
	case FaultWorkerKill:
		return o.WorkerTTL + time.Second/2
	case FaultLeaderKill:
		return o.LeaderTTL + time.Second/2
	case FaultRedisPause:
		return o.RedisPause
	case FaultNATSOutage:
		return o.NATSOutage
	case FaultSameID:
		return time.Second / 2
	case FaultWorkerPause:
		return o.WorkerPause + time.Second
	}
	return 3*config.DefaultHeartbeat + time.Second/2
}

// inject carries out one fault and waits until it has settled (the
// requeue measured, the new leader elected, the server back).
func (r *run) inject(ctx context.Context, f Fault) injected {
	switch f {
	case FaultWorkerKill:
		return r.killWorker(ctx, false)
	case FaultSameID:
		return r.killWorker(ctx, true)
	case FaultLeaderKill:
		return r.killLeader(ctx)
	case FaultRedisPause:
		return r.pauseRedis(ctx)
	case FaultNATSOutage:
		return r.stopNATS(ctx)
	case FaultWorkerPause:
		return r.pauseWorker(ctx)
	}
	return r.forge(ctx)
}

// victim picks the worker running the most jobs (the seed breaks ties), so
// that every kill has something to requeue.
func (r *run) victim(ctx context.Context) (*workerProc, map[attemptKey]bool) {
	ws := r.cl.currentWorkers()
	r.rng.Shuffle(len(ws), func(i, j int) { ws[i], ws[j] = ws[j], ws[i] })
	var best *workerProc
	var bestRunning map[attemptKey]bool
	for _, w := range ws {
		running, err := runningOn(ctx, r.store, w)
		if err != nil {
			continue
		}
		if best == nil || len(running) > len(bestRunning) {
			best, bestRunning = w, running
		}
	}
	if best == nil {
		best = ws[0]
	}
	return best, bestRunning
}

// killWorker SIGKILLs a worker. A plain kill restarts the slot after a
// moment under a fresh ID, so the jobs wait for the controller to find the
// old ID silent; sameID restarts it at once under the same ID, so the new
// registration must requeue them.
func (r *run) killWorker(ctx context.Context, sameID bool) injected {
	kind := FaultWorkerKill
	if sameID {
		kind = FaultSameID
	}
	w, _ := r.victim(ctx)
	// Read again just before the kill: the victim's jobs as they are now.
	running, err := runningOn(ctx, r.store, w)
	in := injected{fault: kind, target: w.id, running: running}
	if err != nil {
		in.problem = fmt.Sprintf("could not read the victim's jobs: %v", err)
	}
	if err := w.c.kill(); err != nil {
		in.problem = err.Error()
		return in
	}
	in.at = time.Now()
	r.effects.poll()
	in.effectsBefore = r.effects.count()
	r.settleRunning(ctx, &in, w)
	id := w.id
	if !sameID {
		// A moment of absence, as a supervisor's restart delay gives.
		sleepUntil(ctx, time.Now().Add(500*time.Millisecond))
		id = fmt.Sprintf("w%d-g%d", w.slot+1, w.gen+1)
	}
	next, err := r.cl.startWorker(w.slot, w.gen+1, id)
	if err != nil {
		in.problem = fmt.Sprintf("restart: %v", err)
		return in
	}
	in.held = unclaimed(ctx, r.store, 500*time.Millisecond)
	in.requeue, in.lasted = r.measureRequeue(ctx, &in)
	if err := r.cl.registered(ctx, next, 15*time.Second); err != nil {
		in.problem = join(in.problem, err.Error())
	}
	in.note = fmt.Sprintf("%d running jobs; restarted as %s", len(in.running), id)
	if len(in.held) > 0 {
		in.note += fmt.Sprintf("; %d deliveries taken but not yet claimed", len(in.held))
	}
	return in
}

// settleRunning reads the victim's jobs again once it is killed or frozen
// and adds them to in.running. The read before the strike misses a job
// the worker claimed in the moment between it and the signal (a busy
// machine makes that moment long), and that attempt's side effect would
// then count as unexplained. A stopped process claims nothing more, and
// the controller requeues nothing of it before worker_ttl (a same-id
// restart comes after this read), so this read misses nothing.
func (r *run) settleRunning(ctx context.Context, in *injected, w *workerProc) {
	after, err := runningOn(ctx, r.store, w)
	if err != nil {
		in.problem = join(in.problem, fmt.Sprintf("could not read the victim's jobs after the signal: %v", err))
		return
	}
	if in.running == nil {
		in.running = map[attemptKey]bool{}
	}
	for k := range after {
		in.running[k] = true
	}
}

// measureRequeue waits for the killed worker's attempts to be requeued.
func (r *run) measureRequeue(ctx context.Context, in *injected) ([]time.Duration, time.Duration) {
	times, pending := requeueTimes(ctx, r.store, in.running, in.at, 30*time.Second)
	if len(pending) > 0 {
		in.problem = join(in.problem, fmt.Sprintf("%d jobs not requeued within 30s: %s", len(pending), strings.Join(pending, " ")))
	}
	return times, time.Since(in.at)
}

// pauseWorker freezes a worker process, not its jobs (each runs under a
// supervisor in a process group of its own), for longer than worker_ttl,
// then wakes it. The controller requeues its jobs meanwhile, and the woken
// worker must find itself fenced and stop the attempts it still runs.
func (r *run) pauseWorker(ctx context.Context) injected {
	w, _ := r.victim(ctx)
	running, err := runningOn(ctx, r.store, w)
	in := injected{fault: FaultWorkerPause, target: w.id, running: running}
	if err != nil {
		in.problem = fmt.Sprintf("could not read the victim's jobs: %v", err)
	}
	if err := w.c.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		in.at, in.problem = time.Now(), err.Error()
		return in
	}
	in.at = time.Now()
	r.settleRunning(ctx, &in, w)
	running = in.running
	times, pending := requeueTimes(ctx, r.store, running, in.at, r.o.WorkerPause)
	sleepUntil(context.WithoutCancel(ctx), in.at.Add(r.o.WorkerPause))
	if err := w.c.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		in.problem = join(in.problem, err.Error())
	}
	in.lasted = time.Since(in.at)
	in.note = fmt.Sprintf("%d running jobs, %d requeued while it was frozen (max %s after the pause)",
		len(running), len(times), spread(times).max().Round(time.Millisecond))
	if len(pending) > 0 && r.o.WorkerPause > r.o.WorkerTTL+time.Second {
		in.problem = join(in.problem, fmt.Sprintf("%d jobs not requeued while their worker was frozen past worker_ttl", len(pending)))
	}
	// Woken, it must be fenced at its next beat and carry on under a new
	// identity, not exit.
	sleepUntil(ctx, time.Now().Add(3*r.cfg.Worker.Heartbeat.Std()))
	if w.c.exited() {
		in.problem = join(in.problem, w.id+" exited after it was woken")
	}
	return in
}

// killLeader SIGKILLs the leading controller, waits for another to take
// the lease, and starts a replacement so two run again.
func (r *run) killLeader(ctx context.Context) injected {
	in := injected{fault: FaultLeaderKill}
	lead, err := r.cl.waitLeader(ctx, nil, 10*time.Second)
	if err != nil {
		in.at, in.problem = time.Now(), err.Error()
		return in
	}
	_, lease, _ := r.cl.leader(ctx)
	in.target = fmt.Sprintf("%s (%s)", lead.name, lease)
	if err := lead.kill(); err != nil {
		in.at, in.problem = time.Now(), err.Error()
		return in
	}
	in.at = time.Now()
	r.cl.dropController(lead)
	next, err := r.cl.waitLeader(ctx, lead, r.o.LeaderTTL+10*time.Second)
	in.lasted = time.Since(in.at)
	if err != nil {
		in.problem = err.Error()
	} else {
		in.note = fmt.Sprintf("%s took the lead after %s (leader_ttl %s)", next.name, in.lasted.Round(time.Millisecond), r.o.LeaderTTL)
	}
	if _, err := r.cl.startController(); err != nil {
		in.problem = join(in.problem, "replacement controller: "+err.Error())
	}
	return in
}

// pauseRedis freezes redis-server for the configured time. The attempts
// running at the pause are noted: if the pause outlasts worker_ttl, their
// workers are declared dead when it ends and the attempts run again, the
// case at-least-once allows.
func (r *run) pauseRedis(ctx context.Context) injected {
	running, err := runningOn(ctx, r.store, nil)
	in := injected{fault: FaultRedisPause, target: "redis-server", running: running}
	if err != nil {
		in.problem = fmt.Sprintf("could not read running jobs: %v", err)
	}
	if err := r.redis.pause(); err != nil {
		in.at, in.problem = time.Now(), err.Error()
		return in
	}
	in.at = time.Now()
	sleepUntil(context.WithoutCancel(ctx), in.at.Add(r.o.RedisPause))
	if err := r.redis.resume(); err != nil {
		in.problem = join(in.problem, err.Error())
	}
	in.lasted = time.Since(in.at)
	in.note = fmt.Sprintf("%d jobs running; worker_ttl %s", len(running), r.o.WorkerTTL)
	return in
}

// stopNATS stops the NATS server and starts it again on the same port.
func (r *run) stopNATS(ctx context.Context) injected {
	in := injected{fault: FaultNATSOutage, target: "nats-server", at: time.Now()}
	r.nats.stop()
	sleepUntil(context.WithoutCancel(ctx), in.at.Add(r.o.NATSOutage))
	if err := r.nats.start(); err != nil {
		in.problem = err.Error()
	}
	in.lasted = time.Since(in.at)
	if gone := r.exitedProcesses(); gone != "" {
		in.problem = join(in.problem, "exited during the outage: "+gone)
	} else {
		in.note = "every controller and worker rode it out"
	}
	return in
}

// exitedProcesses names the current controllers and workers that exited.
func (r *run) exitedProcesses() string {
	var gone []string
	for _, w := range r.cl.currentWorkers() {
		if w.c.exited() {
			gone = append(gone, w.id)
		}
	}
	r.cl.mu.Lock()
	for _, c := range r.cl.controllers {
		if c.exited() {
			gone = append(gone, c.name)
		}
	}
	r.cl.mu.Unlock()
	return strings.Join(gone, " ")
}

// forge publishes every control action, recorded nowhere, on every
// worker's control subject (cancel and preempt naming a job the worker
// runs), then checks that nothing changed: no worker drains or exits, no
// named job was cancelled, preempted or moved.
func (r *run) forge(ctx context.Context) injected {
	in := injected{fault: FaultForged, target: "every worker", at: time.Now()}
	type target struct {
		w   *workerProc
		job attemptKey
	}
	var targets []target
	sent := 0
	for _, w := range r.cl.currentWorkers() {
		running, _ := runningOn(ctx, r.store, w)
		msgs := []workers.ControlMessage{{Action: workers.ControlDrain}, {Action: workers.ControlSpotNotice, NoticeSeconds: 1}}
		for k := range running {
			targets = append(targets, target{w, k})
			msgs = append(msgs, workers.ControlMessage{Action: workers.ControlCancel, JobID: k.job, Attempt: k.attempt},
				workers.ControlMessage{Action: workers.ControlPreempt, JobID: k.job, Attempt: k.attempt})
			break
		}
		for _, m := range msgs {
			// Published raw, as anyone on the bus could: NotifyControl is
			// for requests already recorded, and these are recorded nowhere.
			b, _ := json.Marshal(m)
			if err := r.nc.Publish(r.subj.Control(w.id), b); err == nil {
				sent++
			}
		}
	}
	_ = r.nc.FlushTimeout(2 * time.Second)
	// Three heartbeats: a worker that trusted a message would have acted.
	sleepUntil(ctx, time.Now().Add(3*r.cfg.Worker.Heartbeat.Std()+500*time.Millisecond))
	in.lasted = time.Since(in.at)
	var changed []string
	if gone := r.exitedProcesses(); gone != "" {
		changed = append(changed, "exited: "+gone)
	}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if ws, err := registry.New(r.store).Workers(cctx); err == nil {
		for _, w := range ws {
			if w.Draining {
				changed = append(changed, w.ID+" draining")
			}
		}
	}
	for _, t := range targets {
		j, err := r.store.Get(cctx, t.job.job)
		if err != nil {
			continue
		}
		if j.CancelRequested || j.State == jobs.StateCancelled || j.Preemptions > 0 || j.Attempt != t.job.attempt {
			changed = append(changed, fmt.Sprintf("job %s: %s attempt %d (was %d), %d preemptions, cancel=%v",
				j.ID, j.State, j.Attempt, t.job.attempt, j.Preemptions, j.CancelRequested))
		}
	}
	sort.Strings(changed)
	in.note = fmt.Sprintf("%d messages to %d workers, %d naming a running job", sent, len(r.cl.currentWorkers()), len(targets))
	if len(changed) > 0 {
		in.problem = "forged control messages had an effect: " + strings.Join(changed, "; ")
	} else {
		in.note += "; nothing changed"
	}
	return in
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
