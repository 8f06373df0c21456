package workers_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/logs"
	"github.com/ballastdev/ballast/workers"
)

// wait is the deadline for conditions that should hold within a second or
// two; retries wait longer because asynq moves delayed tasks to pending on
// its own schedule (every few seconds).
const (
	wait      = 5 * time.Second
	retryWait = 15 * time.Second
)

// env is one test's world: a Redis namespace of its own, a job store on it and
// a scratch directory for the files jobs write.
type env struct {
	t     testing.TB
	rdb   *redis.Client
	ns    string
	store *queues.Store
	dir   string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	rdb, ns := testenv.Redis(t)
	return &env{t: t, rdb: rdb, ns: ns, store: queues.NewStore(rdb, queues.StoreOptions{Namespace: ns}), dir: t.TempDir()}
}

// options are fast settings for tests: short polls, heartbeats and drains.
// controlled is the control channel of a worker under test: an embedded
// NATS server of the test's own, the controller's connection to it, and
// the subjects.
type controlled struct {
	srv  *server.Server
	ctl  *nats.Conn
	subj events.Subjects
}

// withControl returns e's worker options listening for control wake-ups,
// and the controller's side of the channel.
func (e *env) withControl() (workers.Options, controlled) {
	srv := testenv.NATS(e.t)
	c := controlled{srv: srv, ctl: testenv.NATSConn(e.t, srv), subj: events.Subjects{Prefix: e.ns}}
	o := e.options()
	o.Control, o.Subjects = testenv.NATSConn(e.t, srv), c.subj
	return o, c
}

func (e *env) options() workers.Options {
	return workers.Options{
		Pool:          "fixed",
		Slots:         2,
		Queues:        []queues.Queue{queues.QueueCore, queues.QueueLoan},
		PollInterval:  5 * time.Millisecond,
		Heartbeat:     100 * time.Millisecond,
		DrainTimeout:  300 * time.Millisecond,
		LogDir:        e.t.TempDir(),
		CheckpointDir: e.t.TempDir(),
		RetryBackoff:  50 * time.Millisecond,
		Logger:        testLogger(e.t),
	}
}

// start creates and starts a worker that is stopped when the test ends.
func (e *env) start(o workers.Options) *workers.Worker {
	e.t.Helper()
	return e.startOn(e.store, o)
}

// startOn starts a worker of options o on store (e's, or one that reaches
// the same Redis another way), stopped when the test ends.
func (e *env) startOn(store *queues.Store, o workers.Options) *workers.Worker {
	e.t.Helper()
	w, err := workers.New(store, o)
	if err != nil {
		e.t.Fatalf("workers.New: %v", err)
	}
	if err := w.Start(context.Background()); err != nil {
		e.t.Fatalf("Start: %v", err)
	}
	e.t.Cleanup(w.Stop)
	return w
}

// shell is a job running script under sh, with the scratch directory passed
// as the parameter "dir" (so the job sees it as $BALLAST_PARAM_DIR).
func (e *env) shell(script string) jobs.Spec {
	return jobs.Spec{
		Command: []string{"sh", "-c", script},
		Params:  map[string]any{"dir": e.dir},
		Class:   jobs.ClassCore,
		Rhythm:  jobs.RhythmPeriodic,
		Timeout: jobs.Duration(time.Minute),
		Grace:   jobs.Duration(time.Second),
	}
}

func (e *env) submit(spec jobs.Spec, q queues.Queue) jobs.Job {
	e.t.Helper()
	sub, err := e.store.Submit(context.Background(), spec, q)
	if err != nil {
		e.t.Fatalf("Submit: %v", err)
	}
	if sub.Job.Attempt != 1 || sub.Job.State != jobs.StateQueued {
		e.t.Fatalf("Submit returned %+v, want a queued first attempt", sub.Job)
	}
	return sub.Job
}

func (e *env) get(id string) jobs.Job {
	e.t.Helper()
	j, err := e.store.Get(context.Background(), id)
	if err != nil {
		e.t.Fatalf("Get %s: %v", id, err)
	}
	return j
}

// waitFor waits until the record of id satisfies cond and returns it.
func (e *env) waitFor(id string, within time.Duration, what string, cond func(jobs.Job) bool) jobs.Job {
	e.t.Helper()
	var last jobs.Job
	testenv.Eventually(e.t, within, what, func() bool {
		j, err := e.store.Get(context.Background(), id)
		if err != nil {
			e.t.Fatalf("Get %s: %v", id, err)
		}
		last = j
		return cond(j)
	})
	return last
}

// waitTerminal waits until the job has ended.
func (e *env) waitTerminal(id string, within time.Duration) jobs.Job {
	e.t.Helper()
	return e.waitFor(id, within, "job "+id+" to end", func(j jobs.Job) bool { return j.State.Terminal() })
}

// logs returns the job's output lines kept in Redis.
func (e *env) logs(id string) []logs.Line {
	e.t.Helper()
	lines, err := logs.New(e.store).Logs(context.Background(), id, "", 1000)
	if err != nil {
		e.t.Fatalf("Logs %s: %v", id, err)
	}
	return lines
}

// path is a file in the scratch directory.
func (e *env) path(name string) string { return filepath.Join(e.dir, name) }

// read returns a scratch file's content ("" when it does not exist).
func (e *env) read(name string) string {
	e.t.Helper()
	b, err := os.ReadFile(e.path(name))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		e.t.Fatal(err)
	}
	return string(b)
}

// waitFile waits until a scratch file exists and returns its content.
func (e *env) waitFile(name string, within time.Duration) string {
	e.t.Helper()
	testenv.Eventually(e.t, within, "file "+name+" to be written", func() bool {
		_, err := os.Stat(e.path(name))
		return err == nil
	})
	return e.read(name)
}

// waitLines waits until a scratch file holds at least n whole lines and
// returns its content: a shell's ">>" creates the file before it writes,
// so existence alone can be seen with nothing in it yet.
func (e *env) waitLines(name string, n int, within time.Duration) string {
	e.t.Helper()
	testenv.Eventually(e.t, within, fmt.Sprintf("%d lines in file %s", n, name), func() bool {
		return strings.Count(e.read(name), "\n") >= n
	})
	return e.read(name)
}

// touch creates a scratch file (jobs poll for such files to go on).
func (e *env) touch(name string) {
	e.t.Helper()
	if err := os.WriteFile(e.path(name), []byte("go\n"), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// hasLine reports whether lines hold text on stream.
func hasLine(lines []logs.Line, stream, text string) bool {
	for _, l := range lines {
		if l.Stream == stream && l.Text == text {
			return true
		}
	}
	return false
}

// alive reports whether the process whose PID a job wrote still exists.
func alive(t *testing.T, pidText string) bool {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(pidText))
	if err != nil || pid <= 1 {
		t.Fatalf("pid file holds %q", pidText)
	}
	return syscall.Kill(pid, 0) == nil
}

// code formats a recorded exit code for messages.
func code(j jobs.Job) string {
	if j.ExitCode == nil {
		return "none"
	}
	return strconv.Itoa(*j.ExitCode)
}

// testLogger sends the worker's log to the test's log, shown when it fails.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(&testWriter{t: t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type testWriter struct {
	mu sync.Mutex
	t  testing.TB
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
