package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// run is one chaos run's state: the servers, the processes, and what was
// seen. Faults are injected one at a time, so that each one's figures
// (a requeue, a handover) are its own.
type run struct {
	o       Options
	dir     string
	started time.Time
	rng     *rand.Rand

	redis   *redisServer
	nats    *natsServer
	cl      *cluster
	cfg     config.Config
	store   *queues.Store
	rdb     redis.UniversalClient
	nc      *nats.Conn
	subj    events.Subjects
	effects *effectLog
}

// Run starts the installation, submits the jobs, injects the faults, waits
// for every accepted job to end (within Options.Timeout), stops everything
// and reports. The error is for a run that could not be carried out
// (redis-server missing, a process that would not start, an interrupt);
// a run that found problems returns a Report whose OK is false.
func Run(ctx context.Context, o Options) (*Report, error) {
	o = o.WithDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if _, err := os.Stat(o.Binary); err != nil {
		return nil, fmt.Errorf("ballast binary: %w", err)
	}
	// Checked before the run directory is made, so that a machine without
	// Redis is told so and left clean.
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, ErrNoRedisServer
	}
	dir := o.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "ballast-chaos-")
		if err != nil {
			return nil, err
		}
		dir = d
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	r := &run{o: o, dir: dir, started: time.Now(), rng: rand.New(rand.NewPCG(o.Seed, 0x6368616f73))}
	var rep *Report
	defer func() {
		// Last, after every process and server has stopped writing into it.
		if o.Dir == "" && !o.Keep && rep != nil && rep.OK() {
			_ = os.RemoveAll(dir)
			rep.Dir += " (removed: the run passed; --keep keeps it)"
		}
	}()
	defer r.stop()
	deadline, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	if err := r.setUp(deadline); err != nil {
		return nil, err
	}
	rep = r.play(deadline)
	if ctx.Err() != nil {
		return rep, fmt.Errorf("chaos run interrupted: %w", ctx.Err())
	}
	return rep, nil
}

func (r *run) logf(format string, a ...any) {
	fmt.Fprintf(r.o.Progress, "[+%5.1fs] %s\n", time.Since(r.started).Seconds(), fmt.Sprintf(format, a...))
}

// setUp starts Redis, NATS, the controllers and the workers, and waits
// until a controller leads and every worker is registered.
func (r *run) setUp(ctx context.Context) error {
	var err error
	if r.redis, err = startRedis(ctx, filepath.Join(r.dir, "redis"), filepath.Join(r.dir, "redis.log")); err != nil {
		return err
	}
	if r.nats, err = startNATS(filepath.Join(r.dir, "nats")); err != nil {
		return err
	}
	effects := filepath.Join(r.dir, "side-effects.txt")
	r.effects = &effectLog{path: effects}
	cfgPath, cfg, err := writeConfig(r.dir, r.redis.addr, r.nats.url(), effects, r.o)
	if err != nil {
		return err
	}
	r.cfg = cfg
	r.subj = events.Subjects{Prefix: cfg.NATS.SubjectPrefix}
	// Short timeouts: the run reads records while Redis is paused, and a
	// read that hangs would hold a fault's measurement past its end.
	ro, err := config.RedisConfig{Addr: r.redis.addr, DialTimeout: jobs.Duration(time.Second)}.UniversalOptions()
	if err != nil {
		return err
	}
	ro.ReadTimeout, ro.WriteTimeout, ro.ContextTimeoutEnabled, ro.PoolSize = time.Second, time.Second, true, 16
	r.rdb = redis.NewUniversalClient(ro)
	r.store = queues.NewStore(r.rdb, queues.StoreOptions{Namespace: cfg.Namespace})
	opts, err := cfg.NATS.Options()
	if err != nil {
		return err
	}
	if r.nc, err = nats.Connect(cfg.NATS.URL, append(opts, nats.Name("ballast-chaos"))...); err != nil {
		return fmt.Errorf("NATS: %w", err)
	}
	r.logf("redis-server on %s, NATS on %s, run directory %s", r.redis.addr, r.nats.url(), r.dir)

	r.cl = &cluster{bin: r.o.Binary, cfgPath: cfgPath, dir: r.dir, slots: r.o.Slots, store: r.store}
	for range r.o.Controllers {
		if _, err := r.cl.startController(); err != nil {
			return err
		}
	}
	if _, err := r.cl.waitLeader(ctx, nil, 20*time.Second); err != nil {
		return fmt.Errorf("%w; see the controller logs in %s", err, r.dir)
	}
	for i := range r.o.Workers {
		if _, err := r.cl.startWorker(i, 1, fmt.Sprintf("w%d-g1", i+1)); err != nil {
			return err
		}
	}
	for _, w := range r.cl.currentWorkers() {
		if err := r.cl.registered(ctx, w, 20*time.Second); err != nil {
			return err
		}
	}
	r.logf("%d controllers and %d workers (%d slots each) running", r.o.Controllers, r.o.Workers, r.o.Slots)
	return nil
}

// play submits, injects, waits and reports.
func (r *run) play(ctx context.Context) *Report {
	plan := planJobs(r.o, r.rng)
	faults := schedule(r.o, r.rng)
	span := r.o.Gap
	for _, f := range faults {
		span += r.o.expected(f) + r.o.Gap
	}
	fctx, stopFollow := context.WithCancel(ctx)
	var follow sync.WaitGroup
	follow.Add(1)
	go func() { defer follow.Done(); r.effects.follow(fctx, 20*time.Millisecond) }()

	sub := newSubmitted()
	var wg sync.WaitGroup
	var subErr error
	// Submissions are paced over the schedule; once the last fault is in,
	// the rest go at once.
	paced, unpace := context.WithCancel(ctx)
	defer unpace()
	wg.Add(1)
	go func() {
		defer wg.Done()
		subErr = sub.submitAll(ctx, paced, r.cfg, plan, r.o.Clients, time.Now(), span)
	}()
	r.logf("submitting %d jobs over %s from %d clients; %d faults to inject", len(plan), span.Round(time.Second), r.o.Clients, len(faults))

	var done []injected
	sleepUntil(ctx, time.Now().Add(r.o.Gap))
	for i, f := range faults {
		if ctx.Err() != nil {
			break
		}
		in := r.inject(ctx, f)
		done = append(done, in)
		msg := fmt.Sprintf("fault %d/%d %s on %s: lasted %s; %s", i+1, len(faults), f, in.target, in.lasted.Round(time.Millisecond), in.note)
		if len(in.requeue) > 0 {
			msg += "; kill to requeue " + spread(in.requeue).String()
		}
		if in.problem != "" {
			msg += "; PROBLEM: " + in.problem
		}
		r.logf("%s (accepted %d, side effects %d)", msg, sub.accepted(), r.effects.count())
		sleepUntil(ctx, time.Now().Add(r.o.Gap))
	}
	unpace()
	wg.Wait()
	r.logf("submissions done: %d accepted", sub.accepted())
	if subErr != nil {
		r.logf("submitters: %v", subErr)
	}
	timedOut := r.waitEnded(ctx, sub)

	// Stop every process before the last read, so that a stale attempt
	// writing late is counted too.
	stopFollow()
	follow.Wait()
	r.cl.stopAll()
	r.effects.poll()
	records := r.readRecords(sub)
	rep := r.report(sub, records, done)
	if timedOut {
		why := fmt.Sprintf("the run's deadline (%s) passed", r.o.Timeout)
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			why = "the run was interrupted"
		}
		rep.Problems = append([]string{why + " before every accepted job ended"}, rep.Problems...)
		rep.Verdict = "FAIL"
	}
	if subErr != nil {
		rep.Problems = append(rep.Problems, "submitters: "+subErr.Error())
		rep.Verdict = "FAIL"
	}
	return rep
}

// waitEnded waits until every accepted job has ended, or ctx ends (it
// then reports true).
func (r *run) waitEnded(ctx context.Context, sub *submitted) bool {
	sub.mu.Lock()
	ids := make([]string, 0, len(sub.ids))
	for _, id := range sub.ids {
		ids = append(ids, id)
	}
	sub.mu.Unlock()
	last := time.Now()
	for {
		left := 0
		for _, id := range ids {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			j, err := r.store.Get(cctx, id)
			cancel()
			if err != nil || !j.State.Terminal() {
				left++
			}
		}
		if left == 0 {
			r.logf("every accepted job has ended")
			return false
		}
		if time.Since(last) > 5*time.Second {
			r.logf("waiting for %d jobs to end", left)
			last = time.Now()
		}
		if !sleepUntil(ctx, time.Now().Add(250*time.Millisecond)) {
			return true
		}
	}
}

// readRecords reads every accepted job's record, with a context of its own:
// the run's may have ended.
func (r *run) readRecords(sub *submitted) map[string]jobs.Job {
	out := map[string]jobs.Job{}
	sub.mu.Lock()
	defer sub.mu.Unlock()
	for _, id := range sub.ids {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		j, err := r.store.Get(ctx, id)
		cancel()
		if err == nil {
			out[id] = j
		} else if !errors.Is(err, jobs.ErrNotFound) {
			// Unreadable is not gone: say so rather than count it lost.
			j.State = jobs.State("unreadable: " + err.Error())
			out[id] = j
		}
	}
	return out
}

// report puts the run's findings together.
func (r *run) report(sub *submitted, records map[string]jobs.Job, done []injected) *Report {
	effects, bad := r.effects.snapshot()
	sub.mu.Lock()
	t := classify(sub.ids, records, effects, done, r.o.WorkerTTL)
	rep := &Report{Jobs: r.o.Jobs, Workers: r.o.Workers, Slots: r.o.Slots, Controllers: r.o.Controllers, Seed: r.o.Seed,
		WorkerTTL: r.o.WorkerTTL.Seconds(), LeaderTTL: r.o.LeaderTTL.Seconds(), FaultKinds: r.o.Faults, Dir: r.dir,
		Accepted: t.accepted, Refused: len(sub.refused), SubmitRetries: sub.retries, DuplicateReplies: sub.duplicates,
		Succeeded: t.succeeded, ExactlyOnce: t.once, Doubled: t.doubled, DoubledPausedPastTTL: t.pausedTTL,
		DoubledKilledBeforeRecord: t.killedFirst, Lost: t.lost, Failed: t.failed, UnknownEffects: t.unknown,
		MalformedEffects: len(bad), Anomalies: t.anomalies, Problems: []string{}}
	sub.mu.Unlock()
	var detected, takenOver, held []time.Duration
	for _, in := range done {
		times, pending := redelivered(in.held, in.at, records)
		held = append(held, times...)
		if len(pending) > 0 {
			in.problem = join(in.problem, fmt.Sprintf("%d deliveries the killed worker had taken never ran again", len(pending)))
		}
		fr := FaultReport{Fault: in.fault, At: in.at.Sub(r.started).Seconds(), Target: in.target, Lasted: in.lasted.Seconds(),
			Running: len(in.running), Note: in.note, Problem: in.problem}
		if len(in.requeue) > 0 {
			fr.RequeueMax = spread(in.requeue).Max
		}
		switch in.fault {
		case FaultWorkerKill:
			detected = append(detected, in.requeue...)
		case FaultSameID:
			takenOver = append(takenOver, in.requeue...)
		}
		rep.Faults = append(rep.Faults, fr)
	}
	rep.Detected, rep.TakenOver, rep.Unclaimed, rep.RecordLag = spread(detected), spread(takenOver), spread(held), spread(t.lag)
	rep.Seconds = time.Since(r.started).Seconds()
	rep.judge(r.o.RequeueLimit)
	return rep
}

// stop ends everything the run started, in the order that leaves nothing
// behind: processes first (they hold connections to the servers), then
// NATS and Redis. Safe after a failed set-up.
func (r *run) stop() {
	if r.cl != nil {
		r.cl.stopAll()
	}
	if r.nc != nil {
		r.nc.Close()
	}
	if r.rdb != nil {
		_ = r.rdb.Close()
	}
	if r.nats != nil {
		r.nats.stop()
	}
	if r.redis != nil {
		r.redis.stop()
	}
}
