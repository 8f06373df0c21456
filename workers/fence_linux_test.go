package workers_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/workers"
)

// fenceTTL is the worker TTL of these tests: short, so an episode longer
// than it stays a few seconds. With the default share the worker fences at
// 1.5 s and kills at 1.75 s after its last renewal.
const fenceTTL = 2 * time.Second

// fenceRig is a Redis of the test's own (these tests cut it off or pause
// it, which the shared one must never be), a namespace on it, the
// controller's direct store (env.store) and a store that reaches it
// through a proxy the test can cut.
type fenceRig struct {
	*env
	proxy    *testenv.CutProxy
	cutStore *queues.Store
}

func newFenceRig(t *testing.T) *fenceRig {
	t.Helper()
	rdb := testenv.RedisServer(t)
	ns := "fence" + testenv.RandomHex(4)
	e := &env{t: t, rdb: rdb, ns: ns, store: queues.NewStore(rdb, queues.StoreOptions{Namespace: ns}), dir: t.TempDir()}
	proxy := testenv.NewCutProxy(t, rdb.Options().Addr)
	pc := redis.NewClient(&redis.Options{Addr: proxy.Addr()})
	t.Cleanup(func() { _ = pc.Close() }) // after the workers stop: registered before them
	return &fenceRig{env: e, proxy: proxy, cutStore: queues.NewStore(pc, queues.StoreOptions{Namespace: ns})}
}

// fenceOptions are e's worker options with the short TTL.
func (e *env) fenceOptions(id string, slots int) workers.Options {
	o := e.options()
	o.ID, o.Slots, o.WorkerTTL = id, slots, fenceTTL
	return o
}

// holdingJob writes its PID, ignores SIGTERM (only the kill ends it), and
// on its first attempt, when hold is 1, works for a minute; then it does
// its side effect: one line "JOB ATTEMPT" in the file effects.
func (e *env) holdingJob(hold bool) jobs.Spec {
	s := e.shell(`
echo $$ > "$BALLAST_PARAM_DIR/pid.$BALLAST_JOB_ID.$BALLAST_ATTEMPT"
trap '' TERM
if [ "$BALLAST_ATTEMPT" = 1 ] && [ "$BALLAST_PARAM_HOLD" = 1 ]; then sleep 60; fi
echo "$BALLAST_JOB_ID $BALLAST_ATTEMPT" >> "$BALLAST_PARAM_DIR/effects"`)
	s.Params["hold"] = map[bool]int{false: 0, true: 1}[hold]
	return s
}

// deaths watches processes and notes when each was first seen gone (or a
// zombie, which runs nothing).
type deaths struct {
	mu   sync.Mutex
	at   map[int]time.Time
	stop chan struct{}
	done chan struct{}
}

func watchDeaths(t *testing.T, pids []int) *deaths {
	d := &deaths{at: map[int]time.Time{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(d.done)
		for {
			for _, pid := range pids {
				d.mu.Lock()
				_, seen := d.at[pid]
				d.mu.Unlock()
				if !seen && !running(pid) {
					d.mu.Lock()
					d.at[pid] = time.Now()
					d.mu.Unlock()
				}
			}
			select {
			case <-d.stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(d.end)
	return d
}

func (d *deaths) end() {
	select {
	case <-d.stop:
	default:
		close(d.stop)
	}
	<-d.done
}

func (d *deaths) when(pid int) (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	at, ok := d.at[pid]
	return at, ok
}

// running reports whether pid is a live process (not gone, not a zombie).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

// pidOf waits for the PID file of a job's attempt.
func (e *env) pidOf(id string, attempt int) int {
	e.t.Helper()
	name := fmt.Sprintf("pid.%s.%d", id, attempt)
	var pid int
	testenv.Eventually(e.t, wait, name+" to hold a PID", func() bool {
		n, err := strconv.Atoi(strings.TrimSpace(e.read(name)))
		pid = n
		return err == nil && n > 1
	})
	return pid
}

// recovery is the controller's dead-worker recovery, run as the leader
// does (queues.Store.RecoverDeadWorkers every 100 ms) on the direct store.
type recovery struct {
	mu    sync.Mutex
	first time.Time // when the first call that requeued anything began
	recs  []queues.Recovered
	stop  chan struct{}
	done  chan struct{}
}

func (e *env) recoverEvery100ms() *recovery {
	r := &recovery{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for {
			at := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			rs, err := e.store.RecoverDeadWorkers(ctx, fenceTTL)
			cancel()
			if err == nil && len(rs) > 0 {
				r.mu.Lock()
				if r.first.IsZero() {
					r.first = at
				}
				r.recs = append(r.recs, rs...)
				r.mu.Unlock()
			}
			select {
			case <-r.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	e.t.Cleanup(r.end)
	return r
}

func (r *recovery) end() {
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	<-r.done
}

func (r *recovery) result() (time.Time, []queues.Recovered) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first, append([]queues.Recovered(nil), r.recs...)
}

// lastBeat is worker id's registry timestamp, read directly.
func (e *env) lastBeat(id string) (time.Time, bool) {
	e.t.Helper()
	ws, err := registry.New(e.store).Workers(context.Background())
	if err != nil {
		e.t.Fatalf("Workers: %v", err)
	}
	for _, w := range ws {
		if w.ID == id {
			return w.LastBeat, true
		}
	}
	return time.Time{}, false
}

// effects reads the side effects: lines "JOB ATTEMPT [NANOS]" by job.
func (e *env) effects() map[string][]string {
	out := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(e.read("effects")), "\n") {
		if f := strings.Fields(l); len(f) >= 2 {
			out[f[0]] = append(out[f[0]], l)
		}
	}
	return out
}

// TestSelfFenceStopsJobsOfAWorkerCutOffFromRedis: a worker cut off from
// Redis (a partition: the controller still reaches it) kills its jobs, even
// jobs that ignore SIGTERM, before its registration lapses and the
// controller requeues them; another worker runs the new attempts; once the
// link is back the cut-off worker learns it was fenced, takes a new
// identity and takes work again. Every job's side effect happens once.
func TestSelfFenceStopsJobsOfAWorkerCutOffFromRedis(t *testing.T) {
	t.Parallel()
	r := newFenceRig(t)
	wa := r.startOn(r.cutStore, r.fenceOptions("cut-a", 4))

	var held []jobs.Job
	pids := map[string]int{}
	for range 4 {
		j := r.submit(r.holdingJob(true), queues.QueueCore)
		held = append(held, j)
	}
	var pidList []int
	for _, j := range held {
		pids[j.ID] = r.pidOf(j.ID, 1)
		pidList = append(pidList, pids[j.ID])
	}

	r.proxy.Cut()
	cut := time.Now()
	dead := watchDeaths(t, pidList)
	rec := r.recoverEvery100ms()
	// The last renewal that reached Redis, as the controller sees it: the
	// worker cannot change it while cut off (a beat in flight at the cut
	// lands within a few milliseconds, before this reads).
	time.Sleep(300 * time.Millisecond)
	beat, ok := r.lastBeat("cut-a")
	if !ok {
		t.Fatal("the cut-off worker is not in the registry")
	}
	testenv.Eventually(t, 3*fenceTTL, "the controller to requeue the cut-off worker's jobs", func() bool {
		first, _ := rec.result()
		return !first.IsZero()
	})
	requeuedAt, recs := rec.result()
	if len(recs) != len(held) {
		t.Fatalf("the controller requeued %d jobs, want %d: %+v", len(recs), len(held), recs)
	}
	for _, j := range held {
		at, ok := dead.when(pids[j.ID])
		if !ok {
			t.Fatalf("job %s still runs on the cut-off worker after the controller requeued it", j.ID)
		}
		if !at.Before(beat.Add(fenceTTL)) || !at.Before(requeuedAt) {
			t.Errorf("job %s ended %s after its worker's last renewal, the requeue came at %s: want it ended before the TTL (%s) and the requeue",
				j.ID, at.Sub(beat).Round(time.Millisecond), requeuedAt.Sub(beat).Round(time.Millisecond), fenceTTL)
		}
		t.Logf("job %s: killed %s after the last renewal (%s after the cut); requeued at %s",
			j.ID, at.Sub(beat).Round(time.Millisecond), at.Sub(cut).Round(time.Millisecond), requeuedAt.Sub(beat).Round(time.Millisecond))
	}

	// Another worker runs the new attempts.
	wb := r.start(r.fenceOptions("direct-b", 4))
	for _, j := range held {
		got := r.waitTerminal(j.ID, 3*wait)
		if got.State != jobs.StateSucceeded || got.Attempt != 2 || got.Worker != "direct-b" {
			t.Errorf("job %s: %s at attempt %d on %q, want succeeded at attempt 2 on direct-b", j.ID, got.State, got.Attempt, got.Worker)
		}
	}

	// The link comes back after more than a TTL: the worker hears it was
	// declared dead, and serves again under a new identity.
	time.Sleep(time.Until(cut.Add(fenceTTL + time.Second)))
	r.proxy.Restore()
	testenv.Eventually(t, 3*wait, "the cut-off worker to take a new identity", func() bool {
		_, ok := r.lastBeat(wa.ID())
		return wa.ID() != "cut-a" && ok
	})
	wb.Stop()
	var later []jobs.Job
	for range 3 {
		later = append(later, r.submit(r.holdingJob(false), queues.QueueCore))
	}
	for _, j := range later {
		got := r.waitTerminal(j.ID, 3*wait)
		if got.State != jobs.StateSucceeded || got.Worker != wa.ID() {
			t.Errorf("job %s after the cut: %s on %q, want succeeded on the cut-off worker's new identity %s", j.ID, got.State, got.Worker, wa.ID())
		}
	}

	// Each job's side effect happened once, by the attempt that succeeded.
	effects := r.effects()
	for _, j := range append(held, later...) {
		got := r.get(j.ID)
		want := fmt.Sprintf("%s %d", j.ID, got.Attempt)
		if lines := effects[j.ID]; len(lines) != 1 || lines[0] != want {
			t.Errorf("job %s side effects %q, want once: %q", j.ID, lines, want)
		}
	}
	testenv.Eventually(t, wait, "the worker to report its fence to the registry", func() bool {
		ws, err := registry.New(r.store).Workers(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if w.ID == wa.ID() {
				return w.SelfFences == 1 && w.SelfFencedSeconds > 0
			}
		}
		return false
	})
}

// TestSelfFenceThroughARedisPause: Redis paused for everyone for longer
// than the worker TTL. The controller requeues nothing (it waits for Redis
// to answer for a TTL first, see controller.Tick), but the worker cannot
// know that and kills its jobs before its registration would lapse. Once
// Redis answers it hands the stopped attempts back itself, through the
// fenced requeue, keeps its identity, and runs their next attempts, each
// side effect once.
func TestSelfFenceThroughARedisPause(t *testing.T) {
	t.Parallel()
	r := newFenceRig(t)
	w := r.start(r.fenceOptions("paused-a", 3))
	var held []jobs.Job
	var pidList []int
	for range 3 {
		j := r.submit(r.holdingJob(true), queues.QueueCore)
		held = append(held, j)
	}
	for _, j := range held {
		pidList = append(pidList, r.pidOf(j.ID, 1))
	}
	beat, _ := r.lastBeat("paused-a")
	pause := 2*fenceTTL + 500*time.Millisecond
	if err := r.rdb.Do(context.Background(), "CLIENT", "PAUSE", pause.Milliseconds(), "ALL").Err(); err != nil {
		t.Fatalf("CLIENT PAUSE: %v", err)
	}
	paused := time.Now()
	dead := watchDeaths(t, pidList)
	testenv.Eventually(t, pause, "the jobs to be killed during the pause", func() bool {
		for _, pid := range pidList {
			if _, ok := dead.when(pid); !ok {
				return false
			}
		}
		return true
	})
	for _, pid := range pidList {
		at, _ := dead.when(pid)
		// The worker's last renewal is no earlier than the beat read
		// before the pause, so this bound is the stricter one.
		if !at.Before(beat.Add(fenceTTL)) {
			t.Errorf("pid %d killed %s after the last renewal seen, want before the TTL (%s)", pid, at.Sub(beat).Round(time.Millisecond), fenceTTL)
		}
		t.Logf("pid %d killed %s into the pause, %s after the last renewal seen", pid, at.Sub(paused).Round(time.Millisecond), at.Sub(beat).Round(time.Millisecond))
	}
	for _, j := range held {
		got := r.waitTerminal(j.ID, pause+3*wait)
		if got.State != jobs.StateSucceeded || got.Attempt != 2 || got.Worker != "paused-a" {
			t.Errorf("job %s: %s at attempt %d on %q, want succeeded at attempt 2 on paused-a (not fenced by anyone)",
				j.ID, got.State, got.Attempt, got.Worker)
		}
	}
	if w.ID() != "paused-a" {
		t.Errorf("the worker took the identity %s; nobody declared it dead", w.ID())
	}
	effects := r.effects()
	for _, j := range held {
		if lines := effects[j.ID]; len(lines) != 1 || lines[0] != j.ID+" 2" {
			t.Errorf("job %s side effects %q, want once, by attempt 2", j.ID, lines)
		}
	}
}

// TestSelfFenceDoubledSideEffectsFigure prints how many of 40 jobs did
// their side effect twice when their worker was cut off from Redis for
// longer than the worker TTL while running them, with self-fencing and,
// for comparison (with -v only), without. It asserts what fencing
// guarantees: no side effect by the cut-off worker after its
// registration lapsed, nothing lost. The doubles that remain are side effects done after the last
// renewal that reached Redis but before the fence stopped the job: their
// success could not be recorded, so the controller ran them again, as
// at-least-once allows.
//
//	go test ./workers/ -run TestSelfFenceDoubledSideEffectsFigure -v
func TestSelfFenceDoubledSideEffectsFigure(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 40 jobs (80 with -v) through cut-offs")
	}
	for _, c := range []struct {
		name  string
		fence float64
	}{{"self-fence", 0}, {"no self-fence", -1}} {
		t.Run(c.name, func(t *testing.T) {
			if c.fence < 0 && !testing.Verbose() {
				t.Skip("the comparison asserts nothing: it runs when its figure is shown (-v)")
			}
			f := doublesThroughACut(t, 40, c.fence)
			t.Logf("FIGURE %s: %d of 40 doubled; side effects by the cut-off worker after the cut: %d before it would fence (%s), %d after, %d of them after its registration lapsed (%s)",
				c.name, f.doubled, f.afterCut-f.afterFence, fenceAt, f.afterFence, f.afterTTL, fenceTTL)
			if c.fence == 0 && f.afterTTL > 0 {
				t.Errorf("with self-fencing, %d side effects of the cut-off worker came after its registration lapsed", f.afterTTL)
			}
		})
	}
}

type doublesFigure struct {
	doubled    int // jobs with two side effects or more
	afterCut   int // side effects by the cut-off worker's requeued attempts after the cut
	afterFence int // of those, after its last renewal plus fenceAt
	afterTTL   int // of those, after its last renewal plus the TTL
}

// fenceAt is when the cut-off worker fences at the default share.
const fenceAt = time.Duration(float64(fenceTTL) * workers.DefaultSelfFence)

// doublesThroughACut runs n jobs (each works 0.3 to 4 s, then writes its
// line with the time) on a worker of 8 slots reached through the proxy and
// one of 4 reached directly, cuts the first off for the TTL plus 2 s while
// it runs 8 of them, and reads the side effects once every job ended.
func doublesThroughACut(t *testing.T, n int, share float64) doublesFigure {
	r := newFenceRig(t)
	oa := r.fenceOptions("cut-a", 8)
	oa.SelfFence = share
	r.startOn(r.cutStore, oa)
	ob := r.fenceOptions("direct-b", 4)
	ob.SelfFence = share
	r.start(ob)
	var all []jobs.Job
	for i := range n {
		s := r.shell(`sleep "$BALLAST_PARAM_WORK"
echo "$BALLAST_JOB_ID $BALLAST_ATTEMPT $(date +%s%N)" >> "$BALLAST_PARAM_DIR/effects"`)
		// Spread over 0.3 to 4 s by a fixed pattern, not a clock.
		s.Params["work"] = fmt.Sprintf("%.2f", 0.3+3.7*float64((i*7)%n)/float64(n))
		all = append(all, r.submit(s, queues.QueueCore))
	}
	testenv.Eventually(t, wait, "the worker to be cut off to run 8 jobs", func() bool {
		busy := 0
		for _, j := range all {
			if got := r.get(j.ID); got.State == jobs.StateRunning && got.Worker == "cut-a" {
				busy++
			}
		}
		return busy == 8
	})
	r.proxy.Cut()
	cut := time.Now()
	rec := r.recoverEvery100ms()
	time.Sleep(300 * time.Millisecond)
	beat, _ := r.lastBeat("cut-a")
	time.Sleep(time.Until(cut.Add(fenceTTL + 2*time.Second)))
	r.proxy.Restore()
	for _, j := range all {
		if got := r.waitTerminal(j.ID, 60*time.Second); got.State != jobs.StateSucceeded {
			t.Errorf("job %s ended %s, want succeeded", j.ID, got.State)
		}
	}
	rec.end()
	_, recs := rec.result()
	moved := map[string]int{} // job -> the cut-off worker's attempt that was requeued
	for _, rc := range recs {
		moved[rc.JobID] = rc.Attempt - 1
	}
	var f doublesFigure
	effects := r.effects()
	for _, j := range all {
		lines := effects[j.ID]
		if len(lines) == 0 {
			t.Errorf("job %s: no side effect (lost)", j.ID)
		}
		if len(lines) > 1 {
			f.doubled++
		}
		for _, l := range lines {
			fs := strings.Fields(l)
			attempt, _ := strconv.Atoi(fs[1])
			nanos, _ := strconv.ParseInt(fs[2], 10, 64)
			at := time.Unix(0, nanos)
			if a, ok := moved[j.ID]; ok && a == attempt && at.After(cut) {
				f.afterCut++
				if at.After(beat.Add(fenceAt)) {
					f.afterFence++
				}
				if at.After(beat.Add(fenceTTL)) {
					f.afterTTL++
				}
				t.Logf("job %s attempt %d (requeued off the cut-off worker): side effect %s after its last renewal",
					j.ID, attempt, at.Sub(beat).Round(time.Millisecond))
			}
		}
	}
	return f
}
