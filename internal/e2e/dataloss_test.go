package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/web/api"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/leader"
	"github.com/ballastdev/ballast/queues/redisinfo"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/workers"
)

// startRedisOn starts an empty, non-persistent redis-server of the test's
// own on port: what a Redis without persistence is after a restart. The
// caller stops it (stopRedis), after the processes that use it: a worker
// stopping drains its jobs into it, and would retry for minutes against a
// Redis already gone.
func startRedisOn(t *testing.T, port int) *exec.Cmd {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		testenv.Unavailable(t, "redis-server", err)
	}
	probe := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port)})
	defer probe.Close()
	answers := func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		return probe.Ping(ctx).Err() == nil
	}
	// The Redis killed just before may not have let go of the port yet:
	// a server started then cannot bind and exits at once. Start again
	// until one answers, for as long as a loaded machine may need.
	deadline := time.Now().Add(20 * time.Second)
	for attempt := 1; ; attempt++ {
		cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--dir", t.TempDir())
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting redis-server: %v", err)
		}
		exited := make(chan struct{})
		go func() { _, _ = cmd.Process.Wait(); close(exited) }()
		for time.Now().Before(deadline) {
			if answers() {
				return cmd
			}
			select {
			case <-exited:
			case <-time.After(100 * time.Millisecond):
				continue
			}
			break
		}
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
		}
		if !time.Now().Before(deadline) {
			t.Fatalf("redis-server on port %d did not answer PING in 20s (%d starts)", port, attempt)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// stopRedis kills a redis-server of startRedisOn (nil: none) and waits
// for it.
func stopRedis(cmd *exec.Cmd) {
	if cmd != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
}

// gate is the jobs' handler: jobs below fast end at once, the others wait
// for open (or for their attempt to be stopped). A job's side effect is
// counted only when its handler completes, as a real job's output would
// be written only then.
type gate struct {
	fast     int
	open     chan struct{}
	openOnce sync.Once

	mu      sync.Mutex
	effects map[int]int  // job's param i → completed runs
	running map[int]bool // params i whose handler waits now
}

func (g *gate) handler(ctx context.Context, r *workers.Run) error {
	i, err := strconv.Atoi(fmt.Sprint(r.Params["i"]))
	if err != nil {
		return err
	}
	if i >= g.fast {
		g.mu.Lock()
		g.running[i] = true
		g.mu.Unlock()
		defer func() {
			g.mu.Lock()
			delete(g.running, i)
			g.mu.Unlock()
		}()
		select {
		case <-g.open:
		case <-ctx.Done():
			return ctx.Err() // stopped: its work did not complete
		}
	}
	g.mu.Lock()
	g.effects[i]++
	g.mu.Unlock()
	return nil
}

// release lets every waiting and later handler complete.
func (g *gate) release() { g.openOnce.Do(func() { close(g.open) }) }

// snapshot returns the completed runs by param i, and how many handlers
// of params below below wait now.
func (g *gate) snapshot(below int) (map[int]int, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	m := make(map[int]int, len(g.effects))
	for k, v := range g.effects {
		m[k] = v
	}
	n := 0
	for i := range g.running {
		if i < below {
			n++
		}
	}
	return m, n
}

// TestRedisLostDataIsDetectedAndRecovered: a Redis without persistence is
// killed and started again empty while jobs are finished, running and
// queued. Within a tick the loss is said by the controller, the status
// API, the metric hook and an event, and a submission is accepted with a
// warning; recover then rebuilds the jobs from the event stream, and every
// accepted job either finished once before the loss or runs once after:
// none lost, none doubled, counted against the submissions. A second
// recover creates nothing.
func TestRedisLostDataIsDetectedAndRecovered(t *testing.T) {
	const fast, total, slots = 10, 30, 4
	proc, addr := privateRedis(t)
	_, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	rdb := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
		MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	p := newPlaneOn(t, rdb, "dataloss", countCatalog(t), nil)
	// The Redis started after the loss stops after the controller and
	// the worker (cleanups run last first).
	var second *exec.Cmd
	t.Cleanup(func() { stopRedis(second) })

	var lossMu sync.Mutex
	var lossSeen *queues.DataLoss
	opts := controller.Options{ID: "ctl", Tick: 100 * time.Millisecond, WorkerTTL: time.Second, LeaderTTL: time.Second,
		Events: p.pub, Logger: quietLogger(),
		OnDataLoss: func(l *queues.DataLoss) { lossMu.Lock(); lossSeen = l; lossMu.Unlock() }}
	ctl, err := controller.New(p.store, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := ctl.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctl.Stop)
	p.sub.DataLoss = ctl.DataLoss

	g := &gate{fast: fast, open: make(chan struct{}), effects: map[int]int{}, running: map[int]bool{}}
	w, err := workers.New(p.store, workers.Options{Pool: "fixed", Slots: slots, PollInterval: 5 * time.Millisecond,
		Queues: []queues.Queue{queues.QueueCore, queues.QueueLoan}, Heartbeat: 200 * time.Millisecond,
		LogDir: t.TempDir(), CheckpointDir: t.TempDir(), Handlers: map[string]workers.Handler{"count": g.handler},
		Events: p.pub, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	// Run before the worker stops: a test that failed with the gate shut
	// would wait on its handlers for good.
	t.Cleanup(g.release)

	cl := client.NewNATS(p.conn(t), p.subj)
	submit := func(i int) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r, err := cl.Submit(ctx, countSubmission(i, fmt.Sprintf("loss-%d", i)))
		if err != nil {
			t.Fatalf("submit %d: %v", i, err)
		}
		return r.JobID
	}
	ids := map[int]string{}
	for i := range fast {
		ids[i] = submit(i)
	}
	testenv.Eventually(t, 20*time.Second, "the fast jobs succeeded", func() bool {
		effects, _ := g.snapshot(total)
		return len(effects) == fast
	})
	for i := fast; i < total; i++ {
		ids[i] = submit(i)
	}
	testenv.Eventually(t, 20*time.Second, "every slot holds a waiting job", func() bool {
		_, running := g.snapshot(total)
		return running == slots
	})
	// Every job's job.queued and end events are stored before the loss.
	js, err := jetstream.New(p.nc)
	if err != nil {
		t.Fatal(err)
	}
	sysEvents, err := p.conn(t).SubscribeSync(p.subj.System())
	if err != nil {
		t.Fatal(err)
	}

	// The loss: Redis is killed and comes back empty on the same port.
	killed := time.Now()
	if err := proc.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	second = startRedisOn(t, port)
	back := time.Now()
	testenv.Eventually(t, 5*time.Second, "the controller reports the loss", func() bool { return ctl.DataLoss() != nil })
	t.Logf("loss detected %s after the kill, %s after Redis answered again (tick %s)", time.Since(killed).Round(time.Millisecond),
		time.Since(back).Round(time.Millisecond), opts.Tick)
	loss := ctl.DataLoss()
	if !strings.HasPrefix(loss.Message(), "Redis lost its data at ") || loss.LastSeen.IsZero() || loss.At.Before(loss.LastSeen) {
		t.Errorf("loss record %+v: want when it was noticed and when the data was last seen", loss)
	}
	lossMu.Lock()
	if lossSeen == nil {
		t.Error("the metrics hook (OnDataLoss) was not told of the loss")
	}
	lossMu.Unlock()
	msg, err := sysEvents.NextMsg(5 * time.Second)
	if err != nil || !strings.Contains(string(msg.Data), string(events.TypeRedisDataLost)) {
		t.Errorf("system event after the loss: %v, want %s", err, events.TypeRedisDataLost)
	}
	ctx := context.Background()
	st, err := api.CollectStatus(ctx, p.store, registry.New(p.store), leader.New(p.store), redisinfo.New(p.store))
	if err != nil || st.DataLoss == nil {
		t.Errorf("API status after the loss: data_loss %+v, err %v", st.DataLoss, err)
	}
	srv := httptest.NewServer(api.Handler(p.store, p.sub, "", api.Flows{}, api.Insight{}))
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL + "/api/v1/status")
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	if !strings.Contains(body, `"data_loss": {`) || !strings.Contains(body, `"reason": "epoch_`) {
		t.Errorf("GET /api/v1/status after the loss lacks data_loss: %s", body)
	}
	// A submission after the loss is accepted, with a warning.
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	after, err := cl.Submit(sctx, countSubmission(total, fmt.Sprintf("loss-%d", total)))
	cancel()
	if err != nil || !strings.Contains(after.Warning, "Redis lost its data at") {
		t.Errorf("submission after the loss: %+v %v, want it accepted with a warning", after, err)
	}
	ids[total] = after.JobID
	// The attempts running at the loss are stopped: their records are gone.
	// (The job submitted since may be running: its record is there.)
	testenv.Eventually(t, 10*time.Second, "the worker stops the jobs whose records vanished", func() bool {
		_, running := g.snapshot(total)
		return running == 0
	})

	// The new submission's queued event reaches the stream through the
	// outbox a moment after its reply, and the report counts the jobs the
	// stream names: on a busy machine it once came after recovery read.
	testenv.Eventually(t, 10*time.Second, "the stream holds the new submission's queued event", func() bool {
		seen := false
		_, err := eventbus.Replay(ctx, js, "E"+p.ns, p.subj, func(e events.Event) {
			seen = seen || e.Type == events.TypeJobQueued && e.JobID == after.JobID
		})
		return err == nil && seen
	})
	ropts := controller.RecoverOptions{Store: p.store, Events: p.pub, Logger: quietLogger(),
		Replay: func(ctx context.Context, fn func(events.Event)) (int, error) {
			return eventbus.Replay(ctx, js, "E"+p.ns, p.subj, fn)
		}}
	rep, err := controller.Recover(ctx, ropts)
	if err != nil {
		t.Fatalf("recover: %v", err)
	}
	t.Logf("recover: %+v", rep)
	want := controller.RecoverReport{Events: rep.Events, Accepted: total + 1, Rebuilt: total - fast, Rerun: slots,
		SkippedFinished: fast, AlreadyPresent: 1, Cleared: true}
	if fmt.Sprint(rep) != fmt.Sprint(want) {
		t.Errorf("recover report %+v, want %+v", rep, want)
	}
	testenv.Eventually(t, 5*time.Second, "the loss record cleared", func() bool { return ctl.DataLoss() == nil })

	g.release()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var waiting []string
		for i, id := range ids {
			if i < fast {
				continue // finished before the loss: their records went with it
			}
			j, err := p.store.Get(ctx, id)
			if err != nil || j.State != jobs.StateSucceeded {
				waiting = append(waiting, fmt.Sprintf("%d:%s/%s/attempt %d/%s/%v", i, id, j.State, j.Attempt, j.Queue, err))
			}
		}
		if len(waiting) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs accepted but not finished before the loss, not succeeded 30s after the gate opened: %v", waiting)
		}
		time.Sleep(50 * time.Millisecond)
	}
	effects, _ := g.snapshot(total)
	lost, doubled := 0, 0
	for i := range ids {
		switch n := effects[i]; {
		case n == 0:
			lost++
		case n > 1:
			doubled++
		}
	}
	t.Logf("accepted %d: %d finished before the loss, %d rebuilt (%d had started), lost %d, doubled %d",
		len(ids), fast, rep.Rebuilt, rep.Rerun, lost, doubled)
	if lost != 0 || doubled != 0 || len(effects) != len(ids) {
		t.Errorf("side effects %v over %d accepted jobs: %d lost, %d doubled", effects, len(ids), lost, doubled)
	}

	again, err := controller.Recover(ctx, ropts)
	if err != nil || again.Rebuilt != 0 || again.Accepted != total+1 {
		t.Errorf("second recover: %+v %v, want nothing rebuilt", again, err)
	}
}

// readAll reads a response's body.
func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
