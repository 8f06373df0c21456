package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers"
)

// Names the bench gives its work.
const (
	rawTaskType = "bench:noop"
	noopHandler = "noop"
)

// bench is one Run's shared state.
type bench struct {
	opts Options
	rdb  redis.UniversalClient
	ns   string
	dir  string // worker log and checkpoint files, removed at the end
	out  io.Writer
	log  *slog.Logger
	m    *meter
}

// Run measures raw asynq, then Ballast, in a fresh namespace on
// o.RedisAddr, and deletes the namespace's keys before it returns. When
// exactly-once is violated it returns the complete Result together with an
// error wrapping ErrExactlyOnce, so a caller can print the figures and still
// exit non-zero.
func Run(ctx context.Context, o Options) (Result, error) {
	o = o.WithDefaults()
	if err := o.Validate(); err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	// Producers, slots and the workers' finishing writes all hold a
	// connection at once; a pool smaller than that would measure the pool.
	rdb, err := config.NewRedisClient(config.RedisConfig{Addr: o.RedisAddr}, o.Producers+2*o.Slots+16)
	if err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	defer rdb.Close()
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	err = rdb.Ping(pctx).Err()
	cancel()
	if err != nil {
		return Result{}, fmt.Errorf("bench: redis at %s: %w: %v", o.RedisAddr, jobs.ErrUnavailable, err)
	}
	dir, err := os.MkdirTemp("", "ballast-bench-")
	if err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	defer os.RemoveAll(dir)

	out := &lockedWriter{w: o.Out}
	b := &bench{opts: o, rdb: rdb, ns: "bench" + randomHex(5), dir: dir, out: out,
		log: slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	b.m = newMeter(b.ns)
	rdb.AddHook(b.m)
	// Each phase stops its consumer before it returns, so nothing writes
	// into the namespace any more when this runs.
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = queues.PurgeNamespace(ctx, rdb, b.ns)
	}()

	res := Result{RedisAddr: o.RedisAddr, Namespace: b.ns, Jobs: o.Jobs, Producers: o.Producers, Slots: o.Slots,
		PollInterval: o.PollInterval, LatencySamples: o.LatencySamples}
	for r, n := range roundSizes(o.Jobs, o.Rounds) {
		last := r == o.Rounds-1
		fmt.Fprintf(b.out, "round %d of %d: %d tasks or jobs a run\n", r+1, o.Rounds, n)
		var drain, raw, bal Throughput
		var eo ExactlyOnce
		runs := []func() error{
			func() (err error) { drain, err = b.rawDrain(ctx, n); return err },
			func() (err error) {
				var lat Latency
				raw, lat, err = b.raw(ctx, n, last)
				if last {
					res.RawLatency = lat
				}
				return err
			},
			func() (err error) {
				var lat Latency
				bal, lat, eo, err = b.ballast(ctx, n, last)
				if last {
					res.BallastLatency = lat
				}
				return err
			},
		}
		// Rotated, so that no run always follows the same one.
		for k := range runs {
			if err := runs[(r+k)%len(runs)](); err != nil {
				return res, err
			}
		}
		res.RawDrain.add(drain)
		res.Raw.add(raw)
		res.Ballast.add(bal)
		res.ExactlyOnce.add(eo)
		res.RoundRatios = append(res.RoundRatios, ratioOf(bal, better(raw, drain)))
	}
	if !o.NoSubmission {
		if res.Submission, err = b.submission(ctx); err != nil {
			return res, err
		}
	}
	res.Ratio = ratioOf(res.Ballast, res.Baseline())
	return res, res.ExactlyOnce.Err()
}

// raw runs the baseline: plain asynq tasks in their own queue, served by an
// asynq server configured like the Ballast worker's.
func (b *bench) raw(ctx context.Context, n int, withLatency bool) (Throughput, Latency, error) {
	qname := b.ns + ".raw"
	p := newProbe()
	srv := asynq.NewServerFromRedisClient(b.rdb, asynq.Config{
		Concurrency:       b.opts.Slots,
		Queues:            map[string]int{qname: 1},
		TaskCheckInterval: b.opts.PollInterval,
		ShutdownTimeout:   10 * time.Second,
		Logger:            workers.AsynqLogger(b.log),
		LogLevel:          asynq.WarnLevel,
	})
	err := srv.Start(asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		p.hit(id)
		return nil
	}))
	if err != nil {
		return Throughput{}, Latency{}, fmt.Errorf("bench: raw asynq server: %w", err)
	}
	defer srv.Shutdown()
	client := asynq.NewClientFromRedisClient(b.rdb)
	enqueue := func(ctx context.Context, i int) error {
		_, err := client.EnqueueContext(ctx, asynq.NewTask(rawTaskType, []byte(strconv.Itoa(i))), asynq.Queue(qname))
		return err
	}

	fmt.Fprintf(b.out, "raw asynq: %d tasks from %d producers into %d slots...\n", n, b.opts.Producers, b.opts.Slots)
	done := p.expect(n)
	calls := b.m.snapshot()
	used := Sample(ctx, b.rdb)
	start := time.Now()
	if err := produce(ctx, n, b.opts.Producers, enqueue); err != nil {
		return Throughput{}, Latency{}, fmt.Errorf("bench: raw enqueue: %w", err)
	}
	if err := b.await(ctx, done, "raw asynq throughput", p.progress); err != nil {
		return Throughput{}, Latency{}, err
	}
	tp := throughput(n, time.Since(start))
	tp.Calls = since(calls, b.m.snapshot())
	tp.Usage = Sample(ctx, b.rdb).Minus(used)
	fmt.Fprintf(b.out, "raw asynq: %.0f tasks/s (%s)\n", tp.PerSecond, tp.costs())
	if !withLatency {
		return tp, Latency{}, nil
	}
	fmt.Fprintf(b.out, "raw asynq: latency, %d samples...\n", b.opts.LatencySamples)

	// The handler returns as soon as it starts, so the server is idle
	// whenever the previous sample has started.
	lat, err := b.latency(ctx, p, func(ctx context.Context, i int) error { return enqueue(ctx, n+i) }, func() bool { return true })
	if err != nil {
		return Throughput{}, Latency{}, fmt.Errorf("bench: raw latency: %w", err)
	}
	return tp, lat, nil
}

// rawDrain is asynq's other best case: the queue is filled first, with
// no consumer, and the time runs from the server's start to the last task.
// Producers and consumer then do not compete for the machine, which on a
// small one gives asynq a higher figure than end to end.
func (b *bench) rawDrain(ctx context.Context, n int) (Throughput, error) {
	qname := b.ns + ".drain"
	client := asynq.NewClientFromRedisClient(b.rdb)
	fmt.Fprintf(b.out, "raw asynq: filling a queue with %d tasks, then draining it into %d slots...\n", n, b.opts.Slots)
	if err := produce(ctx, n, b.opts.Producers, func(ctx context.Context, i int) error {
		_, err := client.EnqueueContext(ctx, asynq.NewTask(rawTaskType, []byte(strconv.Itoa(i))), asynq.Queue(qname))
		return err
	}); err != nil {
		return Throughput{}, fmt.Errorf("bench: raw fill: %w", err)
	}
	p := newProbe()
	done := p.expect(n)
	srv := asynq.NewServerFromRedisClient(b.rdb, asynq.Config{
		Concurrency:       b.opts.Slots,
		Queues:            map[string]int{qname: 1},
		TaskCheckInterval: b.opts.PollInterval,
		ShutdownTimeout:   10 * time.Second,
		Logger:            workers.AsynqLogger(b.log),
		LogLevel:          asynq.WarnLevel,
	})
	calls := b.m.snapshot()
	used := Sample(ctx, b.rdb)
	start := time.Now()
	if err := srv.Start(asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		p.hit(id)
		return nil
	})); err != nil {
		return Throughput{}, fmt.Errorf("bench: raw asynq server: %w", err)
	}
	defer srv.Shutdown()
	if err := b.await(ctx, done, "raw asynq drain", p.progress); err != nil {
		return Throughput{}, err
	}
	tp := throughput(n, time.Since(start))
	tp.Calls = since(calls, b.m.snapshot())
	tp.Usage = Sample(ctx, b.rdb).Minus(used)
	fmt.Fprintf(b.out, "raw asynq drain: %.0f tasks/s (%s)\n", tp.PerSecond, tp.costs())
	return tp, nil
}

// ballast runs the same load through Store.Submit and a workers.Worker, then
// checks that every job ran exactly once.
func (b *bench) ballast(ctx context.Context, n int, withLatency bool) (Throughput, Latency, ExactlyOnce, error) {
	store := queues.NewStore(b.rdb, queues.StoreOptions{Namespace: b.ns})
	// The producers submit through a store of their own, as an intake does
	// from its own process: each store sends its calls in a pipeline at a
	// time or two (queues/coalesce.go), and sharing one would make the
	// worker's claims and finishes wait behind the producers' submissions,
	// which no deployment does.
	intake := queues.NewStore(b.rdb, queues.StoreOptions{Namespace: b.ns})
	p := newProbe()
	workerID := "bench-" + randomHex(3)
	b.m.setWorker(workerID)
	w, err := workers.New(store, workers.Options{
		Pool:          "fixed",
		ID:            workerID,
		Slots:         b.opts.Slots,
		PollInterval:  b.opts.PollInterval,
		DrainTimeout:  10 * time.Second,
		LogDir:        filepath.Join(b.dir, "logs"),
		CheckpointDir: filepath.Join(b.dir, "checkpoints"),
		Handlers: map[string]workers.Handler{noopHandler: func(_ context.Context, r *workers.Run) error {
			p.hit(r.JobID)
			return nil
		}},
		Logger: b.log,
	})
	if err != nil {
		return Throughput{}, Latency{}, ExactlyOnce{}, fmt.Errorf("bench: %w", err)
	}
	if err := w.Start(ctx); err != nil {
		return Throughput{}, Latency{}, ExactlyOnce{}, fmt.Errorf("bench: %w", err)
	}
	stopped := false
	defer func() {
		if !stopped {
			w.Stop()
		}
	}()
	idle := func() bool { return w.Running() == 0 }

	spec := noopSpec()
	q := controller.Router{}.Route(spec)
	m := 0
	if withLatency {
		m = b.opts.LatencySamples
	}
	ids := make([]string, n+m) // each producer writes only its own indexes
	submit := func(ctx context.Context, i int) error {
		sub, err := intake.Submit(ctx, spec, q)
		if err != nil {
			return err
		}
		ids[i] = sub.Job.ID
		return nil
	}

	fmt.Fprintf(b.out, "ballast: %d jobs from %d producers into %d slots...\n", n, b.opts.Producers, b.opts.Slots)
	done := p.expect(n)
	calls := b.m.snapshot()
	used := Sample(ctx, b.rdb)
	start := time.Now()
	if err := produce(ctx, n, b.opts.Producers, submit); err != nil {
		return Throughput{}, Latency{}, ExactlyOnce{}, fmt.Errorf("bench: ballast submit: %w", err)
	}
	if err := b.await(ctx, done, "ballast throughput", p.progress); err != nil {
		return Throughput{}, Latency{}, ExactlyOnce{}, err
	}
	// Every handler has run; a job is complete once its worker recorded the
	// result, which it does before it lets go of the slot.
	if err := b.waitUntil(ctx, "ballast results recorded", idle); err != nil {
		return Throughput{}, Latency{}, ExactlyOnce{}, err
	}
	tp := throughput(n, time.Since(start))
	tp.Calls = since(calls, b.m.snapshot())
	tp.Usage = Sample(ctx, b.rdb).Minus(used)
	fmt.Fprintf(b.out, "ballast: %.0f jobs/s (%s)\n", tp.PerSecond, tp.costs())

	var lat Latency
	if withLatency {
		fmt.Fprintf(b.out, "ballast: latency, %d samples...\n", m)
		if lat, err = b.latency(ctx, p, func(ctx context.Context, i int) error { return submit(ctx, n+i) }, idle); err != nil {
			return Throughput{}, Latency{}, ExactlyOnce{}, fmt.Errorf("bench: ballast latency: %w", err)
		}
		if err := b.waitUntil(ctx, "ballast results recorded", idle); err != nil {
			return Throughput{}, Latency{}, ExactlyOnce{}, err
		}
	}
	// Stopping first means a late redelivery, had there been one, is
	// already counted when the verdict is taken.
	w.Stop()
	stopped = true
	eo, err := verify(ctx, b.rdb, store.Namespace(), ids, p.snapshot())
	return tp, lat, eo, err
}

// roundSizes splits jobs into rounds as evenly as it goes, the remainder
// spread over the first rounds.
func roundSizes(jobs, rounds int) []int {
	out := make([]int, rounds)
	for i := range out {
		out[i] = jobs / rounds
		if i < jobs%rounds {
			out[i]++
		}
	}
	return out
}

// noopSpec is the job every Ballast sample submits.
func noopSpec() jobs.Spec {
	return jobs.Spec{Template: "bench.noop", Handler: noopHandler, Class: jobs.ClassCore, Rhythm: jobs.RhythmPeriodic,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}
}

// verify checks every submitted job: its handler ran once and its record
// ended succeeded at attempt 1.
func verify(ctx context.Context, rdb redis.UniversalClient, ns queues.Namespace, ids []string, runs map[string]int) (ExactlyOnce, error) {
	e := ExactlyOnce{Checked: len(ids)}
	submitted := make(map[string]bool, len(ids))
	const batch = 500 // bounds one pipeline's reply
	for lo := 0; lo < len(ids); lo += batch {
		part := ids[lo:min(lo+batch, len(ids))]
		cmds := make([]*redis.SliceCmd, len(part))
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, id := range part {
				cmds[i] = p.HMGet(ctx, ns.Job(id), "state", "attempt")
			}
			return nil
		})
		if err != nil {
			return e, fmt.Errorf("bench: read job records: %w", err)
		}
		for i, id := range part {
			submitted[id] = true
			v := cmds[i].Val()
			state, _ := v[0].(string)
			attempt, _ := strconv.Atoi(fmt.Sprint(v[1]))
			viol := Violation{JobID: id, Runs: runs[id], State: state, Attempt: attempt}
			switch {
			case viol.Runs == 0:
				viol.Problem = "never ran"
			case viol.Runs > 1:
				viol.Problem = fmt.Sprintf("ran %d times", viol.Runs)
			case state != string(jobs.StateSucceeded) || attempt != 1:
				viol.Problem = "record did not end succeeded at attempt 1"
			default:
				continue
			}
			e.Violations = append(e.Violations, viol)
		}
	}
	for id, n := range runs {
		if !submitted[id] {
			e.Violations = append(e.Violations, Violation{JobID: id, Runs: n, Problem: "ran but was never submitted"})
		}
	}
	return e, nil
}

// latency submits one job at a time to an idle consumer and measures from
// the submit call to the handler's start.
func (b *bench) latency(ctx context.Context, p *probe, submit func(context.Context, int) error, idle func() bool) (Latency, error) {
	starts := p.watchStarts()
	defer p.unwatchStarts()
	samples := make([]time.Duration, 0, b.opts.LatencySamples)
	for i := range b.opts.LatencySamples {
		if err := b.waitUntil(ctx, "consumer idle", idle); err != nil {
			return Latency{}, err
		}
		// Without a pause every submit would land just after the consumer's
		// last poll and measure nearly a full poll interval; a random one
		// places it anywhere in the cycle, as an independent arrival would.
		if err := sleep(ctx, randDuration(2*b.opts.PollInterval)); err != nil {
			return Latency{}, err
		}
		t0 := time.Now()
		if err := submit(ctx, i); err != nil {
			return Latency{}, err
		}
		wait := time.NewTimer(10*time.Second + 10*b.opts.PollInterval)
		select {
		case s := <-starts:
			samples = append(samples, s.Sub(t0))
		case <-ctx.Done():
			wait.Stop()
			return Latency{}, ctx.Err()
		case <-wait.C:
			return Latency{}, fmt.Errorf("sample %d did not start within %s", i+1, 10*time.Second+10*b.opts.PollInterval)
		}
		wait.Stop()
	}
	return summarize(samples), nil
}

// phaseTimeout bounds one throughput run, generously: it exists to turn a
// hang into an error, not to judge speed.
func (b *bench) phaseTimeout() time.Duration {
	return time.Minute + time.Duration(b.opts.Jobs)*10*time.Millisecond
}

func (b *bench) await(ctx context.Context, done <-chan struct{}, what string, progress func() string) error {
	t := time.NewTimer(b.phaseTimeout())
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("bench: %s: not done within %s (%s)", what, b.phaseTimeout(), progress())
	}
}

// waitUntil polls cond finely: the wait is part of a timed figure.
func (b *bench) waitUntil(ctx context.Context, what string, cond func() bool) error {
	deadline := time.Now().Add(b.phaseTimeout())
	for !cond() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: %s: not reached within %s", what, b.phaseTimeout())
		}
		time.Sleep(200 * time.Microsecond)
	}
	return nil
}

// randDuration is uniform in [0, d).
func randDuration(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return mrand.N(d)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// produce calls submit for every index in [0, n) from k goroutines, and
// stops them all at the first error.
func produce(ctx context.Context, n, k int, submit func(context.Context, int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next sync.Mutex
	i := 0
	take := func() (int, bool) {
		next.Lock()
		defer next.Unlock()
		if i >= n {
			return 0, false
		}
		i++
		return i - 1, true
	}
	var wg sync.WaitGroup
	for range k {
		wg.Go(func() {
			for {
				idx, ok := take()
				if !ok || ctx.Err() != nil {
					return
				}
				if err := submit(ctx, idx); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}

// probe is what the no-op handlers report to: runs per task or job ID, a
// countdown for the throughput runs and start times for the latency runs.
type probe struct {
	mu      sync.Mutex
	runs    map[string]int
	calls   int
	left    int
	done    chan struct{}
	started chan time.Time
}

func newProbe() *probe { return &probe{runs: map[string]int{}} }

// expect arms a countdown of n handler calls; the channel closes at the last.
func (p *probe) expect(n int) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.left, p.done = n, make(chan struct{})
	return p.done
}

// watchStarts reports each handler's start time until unwatchStarts. One
// job runs at a time then, so a buffer of one never drops a sample.
func (p *probe) watchStarts() <-chan time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.started = make(chan time.Time, 1)
	return p.started
}

func (p *probe) unwatchStarts() {
	p.mu.Lock()
	p.started = nil
	p.mu.Unlock()
}

// hit is the whole of a no-op handler.
func (p *probe) hit(id string) {
	now := time.Now()
	p.mu.Lock()
	p.runs[id]++
	p.calls++
	if p.left > 0 {
		p.left--
		if p.left == 0 {
			close(p.done)
		}
	}
	started := p.started
	p.mu.Unlock()
	if started != nil {
		select {
		case started <- now:
		default:
		}
	}
}

func (p *probe) progress() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("%d handler calls so far, %d still expected", p.calls, p.left)
}

func (p *probe) snapshot() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := make(map[string]int, len(p.runs))
	for k, v := range p.runs {
		m[k] = v
	}
	return m
}

// lockedWriter serialises progress lines and worker warnings onto Out.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error
	return hex.EncodeToString(b)
}
