package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"gopkg.in/yaml.v3"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/control/provider"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/queues/usage"
	"github.com/ballastdev/ballast/workers"
)

// Timings shared by the hybrid tests: short, so a whole scenario takes
// seconds, but with the ratios of a real installation.
const (
	hyTick      = 200 * time.Millisecond
	hyWorkerTTL = 2 * time.Second
	hyLeaderTTL = time.Second
	hyHeartbeat = 200 * time.Millisecond
	hyPoll      = 10 * time.Millisecond
	hyGrace     = 2 * time.Second
)

// hybridRig is a namespace, an embedded NATS server, a config file the
// `ballast worker` children load, and a submitter that routes like a
// controller with the capacity policy on (burst work waits in burst).
type hybridRig struct {
	t       *testing.T
	bin     string
	dir     string
	ns      string
	srv     *server.Server
	nc      *nats.Conn
	subj    events.Subjects
	store   *queues.Store
	pub     events.Publisher
	sub     *controller.Submitter
	cfg     config.Config
	cfgPath string
}

// hybridTemplates are the jobs the scenarios submit. The binary is named by
// its path rather than "@ballast", since an in-process worker resolves
// "@ballast" to the test binary.
func hybridTemplates(bin string) map[string]jobs.Template {
	return map[string]jobs.Template{
		// A checkpointable burst job counting steps into a record file.
		"hy-steps": {
			Command: []string{bin, "example-job", "--steps", "${steps}", "--step-time", "100ms", "--checkpoint-every", "1", "--record", "${record}"},
			Class:   jobs.ClassBurst, Checkpointable: true, Retryable: true, Grace: jobs.Duration(hyGrace),
			Params: map[string]jobs.ParamSpec{
				"steps":  {Type: jobs.ParamInt, Required: true},
				"record": {Type: jobs.ParamString, Required: true},
			},
		},
		// A marker for pipeline steps: appends "JOB_ID START_NANOS END_NANOS"
		// to a file shared by every step, sleeping in between, so order and
		// overlap of steps can be read back.
		"hy-mark": {
			Command: []string{"sh", "-c", `s=$(date +%s%N); sleep "$2"; echo "$BALLAST_JOB_ID $s $(date +%s%N)" >> "$1"`,
				"sh", "${record}", "${seconds}"},
			Class: jobs.ClassCore, Grace: jobs.Duration(hyGrace),
			Params: map[string]jobs.ParamSpec{
				"record":  {Type: jobs.ParamString, Required: true},
				"seconds": {Type: jobs.ParamFloat, Default: 0.0},
			},
		},
		// A sweep trial: reports a loss with its minimum at lr 0.35 and
		// layers 3 after sleeping, as a training job prints its metric.
		"hy-trial": {
			Command: []string{"sh", "-c", `sleep "$3"; awk -v lr="$1" -v l="$2" 'BEGIN { printf "{\"loss\": %.6f}\n", (lr-0.35)^2 + (l-3)^2/100 }'`,
				"sh", "${lr}", "${layers}", "${seconds}"},
			Class: jobs.ClassBurst, Checkpointable: true, Retryable: true, Grace: jobs.Duration(hyGrace),
			Params: map[string]jobs.ParamSpec{
				"lr":      {Type: jobs.ParamFloat, Required: true},
				"layers":  {Type: jobs.ParamInt, Required: true},
				"seconds": {Type: jobs.ParamFloat, Default: 0.0},
			},
		},
		// A plain sleep: core or burst by the submission's class, never
		// checkpointable, so burst copies go to on-demand capacity.
		"hy-sleep": {
			Command: []string{"sh", "-c", "sleep \"$1\"", "sh", "${seconds}"},
			Class:   jobs.ClassCore, Grace: jobs.Duration(hyGrace),
			Params: map[string]jobs.ParamSpec{
				"seconds": {Type: jobs.ParamFloat, Required: true},
			},
		},
	}
}

// newHybridRig builds the rig. pools replaces the config's pools; high and
// low are the watermarks.
func newHybridRig(t *testing.T, pools map[string]config.PoolConfig, high, low float64) *hybridRig {
	t.Helper()
	return newHybridRigWith(t, pools, high, low, nil)
}

// newHybridRigWith is newHybridRig with edit applied to the config before it
// is written (nil: none), for settings such as the capacity section.
func newHybridRigWith(t *testing.T, pools map[string]config.PoolConfig, high, low float64, edit func(*config.Config)) *hybridRig {
	t.Helper()
	bin := ballastBinary(t)
	rdb, ns := testenv.Redis(t)
	srv := testenv.NATS(t)
	nc := testenv.NATSConn(t, srv)
	r := &hybridRig{t: t, bin: bin, dir: t.TempDir(), ns: ns, srv: srv, nc: nc, subj: events.Subjects{Prefix: ns}}

	cfg := config.Dev()
	cfg.Namespace = ns
	cfg.Redis.Addr = testenv.RedisAddr()
	cfg.NATS.URL = srv.ClientURL()
	cfg.NATS.SubjectPrefix = ns
	cfg.NATS.Stream = "E" + ns
	cfg.HTTP.Listen = "127.0.0.1:0"
	cfg.Controller.Tick = jobs.Duration(hyTick)
	cfg.Controller.WorkerTTL = jobs.Duration(hyWorkerTTL)
	cfg.Controller.LeaderTTL = jobs.Duration(hyLeaderTTL)
	cfg.Worker.Heartbeat = jobs.Duration(hyHeartbeat)
	cfg.Worker.PollInterval = jobs.Duration(hyPoll)
	cfg.Worker.DrainTimeout = jobs.Duration(time.Second)
	cfg.Worker.LogDir = filepath.Join(r.dir, "logs")
	cfg.Worker.CheckpointDir = filepath.Join(r.dir, "checkpoints")
	cfg.Watermarks = config.Watermarks{High: high, Low: low}
	cfg.Pools = pools
	cfg.Templates = hybridTemplates(bin)
	cfg.Pipelines = nil // the dev demo's pipelines name dev templates; tests set their own
	if edit != nil {
		edit(&cfg)
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatalf("marshal config: %v", err)
	}
	r.cfgPath = filepath.Join(r.dir, "ballast.yaml")
	if err := os.WriteFile(r.cfgPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if r.cfg, err = config.Load(r.cfgPath); err != nil {
		t.Fatalf("the written config does not load: %v\n%s", err, data)
	}

	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := eventbus.EnsureStream(ctx, js, "E"+ns, r.subj, time.Hour); err != nil {
		t.Fatalf("EnsureStream: %v", err)
	}
	r.store = queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	r.pub = eventbus.NewNATSPublisher(nc, r.subj)
	cat, err := r.cfg.Catalog()
	if err != nil {
		t.Fatalf("catalog: %v", err)
	}
	r.sub = &controller.Submitter{Catalog: cat, Store: r.store, Router: controller.Router{ElasticManaged: true},
		Events: r.pub, Logger: quietLogger()}
	return r
}

// capacity builds the hybrid adapter the way internal/cli's newCapacity
// does: the config's watermarks over the default policy, the pools in name
// order, NATS control wake-ups.
func (r *hybridRig) capacity(prov provider.Provider) *controller.Hybrid {
	return &controller.Hybrid{Store: r.store, Launches: usage.New(r.store), Provider: prov, Pools: r.cfg.PolicyPools(), Config: r.cfg.PolicyConfig(), Events: r.pub,
		Logger: quietLogger(), Control: workers.NATSControl{Conn: r.nc, Subjects: r.subj}}
}

// startController starts a controller with the capacity policy on; it is
// stopped at cleanup (stopping twice is fine).
func (r *hybridRig) startController(id string, h *controller.Hybrid) *controller.Controller {
	r.t.Helper()
	ctl, err := controller.New(r.store, controller.Options{ID: id, Tick: hyTick, WorkerTTL: hyWorkerTTL, LeaderTTL: hyLeaderTTL,
		Events: r.pub, Logger: quietLogger(), Capacity: h})
	if err != nil {
		r.t.Fatalf("controller.New: %v", err)
	}
	if err := ctl.Start(context.Background()); err != nil {
		r.t.Fatalf("controller.Start: %v", err)
	}
	r.t.Cleanup(ctl.Stop)
	return ctl
}

// startFixedWorker starts an in-process fixed worker serving core then loan,
// listening for control wake-ups.
func (r *hybridRig) startFixedWorker(id string, slots int) *workers.Worker {
	r.t.Helper()
	return r.startWorker(workers.Options{ID: id, Pool: "fixed", Slots: slots,
		Queues: []queues.Queue{queues.QueueCore, queues.QueueLoan}})
}

// startWorker starts an in-process worker with the rig's timings, paths,
// events and control wake-ups; o names its identity, pool and queues.
func (r *hybridRig) startWorker(o workers.Options) *workers.Worker {
	r.t.Helper()
	o.PollInterval, o.Heartbeat, o.DrainTimeout = hyPoll, hyHeartbeat, time.Second
	o.LogDir, o.CheckpointDir, o.LogLines = r.cfg.Worker.LogDir, r.cfg.Worker.CheckpointDir, 50
	o.Events, o.Logger, o.Control, o.Subjects = r.pub, quietLogger(), r.nc, r.subj
	w, err := workers.New(r.store, o)
	if err != nil {
		r.t.Fatalf("workers.New: %v", err)
	}
	if err := w.Start(context.Background()); err != nil {
		r.t.Fatalf("worker.Start: %v", err)
	}
	r.t.Cleanup(w.Stop)
	return w
}

// localProvider starts elastic workers as `ballast worker` children of the
// built binary, on the rig's config; it is closed at cleanup.
func (r *hybridRig) localProvider(startup map[string]time.Duration) *provider.Local {
	r.t.Helper()
	out, err := os.Create(filepath.Join(r.dir, "elastic.log"))
	if err != nil {
		r.t.Fatal(err)
	}
	prov, err := provider.NewLocal(provider.LocalOptions{Binary: r.bin, ConfigPath: r.cfgPath, StartupDelay: startup,
		ReleaseTimeout: 10 * time.Second, Output: &lockedWriter{w: out}, Logger: quietLogger()})
	if err != nil {
		r.t.Fatalf("provider.NewLocal: %v", err)
	}
	r.t.Cleanup(func() {
		_ = prov.Close()
		_ = out.Close()
	})
	return prov
}

// elasticLog returns the tail of what the elastic children wrote, for
// failure messages.
func (r *hybridRig) elasticLog() string {
	b, _ := os.ReadFile(filepath.Join(r.dir, "elastic.log"))
	const keep = 4000
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return string(b)
}

// lockedWriter serializes the children's output into one file.
type lockedWriter struct {
	mu sync.Mutex
	w  *os.File
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// submitSteps submits a hy-steps job recording into a fresh file.
func (r *hybridRig) submitSteps(key string, steps int) (id, record string) {
	r.t.Helper()
	record = filepath.Join(r.dir, key+".record")
	rec, _ := json.Marshal(record)
	id = r.submit(jobs.Submission{Template: "hy-steps", IdempotencyKey: key,
		Params: map[string]json.RawMessage{"steps": json.RawMessage(strconv.Itoa(steps)), "record": rec}})
	return id, record
}

// submitSleep submits a hy-sleep job of class.
func (r *hybridRig) submitSleep(key string, class jobs.Class, seconds float64) string {
	r.t.Helper()
	return r.submit(jobs.Submission{Template: "hy-sleep", IdempotencyKey: key, Class: string(class),
		Params: map[string]json.RawMessage{"seconds": json.RawMessage(strconv.FormatFloat(seconds, 'f', -1, 64))}})
}

func (r *hybridRig) submit(s jobs.Submission) string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rc, err := r.sub.Submit(ctx, s)
	if err != nil {
		r.t.Fatalf("submit %s: %v", s.IdempotencyKey, err)
	}
	return rc.JobID
}

// waitSucceeded waits up to within for every job of ids to succeed (any
// failing fails the test) and returns when the last of them finished.
func (r *hybridRig) waitSucceeded(within time.Duration, what string, ids ...string) time.Time {
	r.t.Helper()
	var last time.Time
	testenv.Eventually(r.t, within, what, func() bool {
		for _, id := range ids {
			j := r.job(id)
			r.mustNotFail(j)
			if j.State != jobs.StateSucceeded {
				return false
			}
			if j.FinishedAt.After(last) {
				last = j.FinishedAt
			}
		}
		return true
	})
	return last
}

// saveConfig writes the rig's config, as changed by the test, where
// `ballast` children read it, and loads it back: a config that does not
// load fails the test here, not in a child's log.
func (r *hybridRig) saveConfig() {
	r.t.Helper()
	data, err := yaml.Marshal(r.cfg)
	if err != nil {
		r.t.Fatalf("marshal config: %v", err)
	}
	if err := os.WriteFile(r.cfgPath, data, 0o600); err != nil {
		r.t.Fatal(err)
	}
	if r.cfg, err = config.Load(r.cfgPath); err != nil {
		r.t.Fatalf("the changed config does not load: %v\n%s", err, data)
	}
}

func (r *hybridRig) job(id string) jobs.Job {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	j, err := r.store.Get(ctx, id)
	if err != nil {
		r.t.Fatalf("store.Get %s: %v", id, err)
	}
	return j
}

func (r *hybridRig) workers() []queues.WorkerInfo {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, err := registry.New(r.store).Workers(ctx)
	if err != nil {
		r.t.Fatalf("store.Workers: %v", err)
	}
	return ws
}

// mustNotFail fails the test at once if the job ended other than succeeded.
func (r *hybridRig) mustNotFail(j jobs.Job) {
	r.t.Helper()
	if j.State == jobs.StateFailed || j.State == jobs.StateCancelled {
		r.t.Fatalf("job %s ended %s: %s\nelastic log tail:\n%s", j.ID, j.State, j.LastError, r.elasticLog())
	}
}

// checkResumedSteps checks a steps job's record: each attempt's steps are
// contiguous, the first starts at 1, each later attempt starts no later than
// right after the last step done before it, and together they cover
// 1..steps. It returns the attempts seen, in order.
func checkResumedSteps(t *testing.T, id, record string, steps int) []int {
	t.Helper()
	byAttempt := readRecord(t, record)
	attempts := make([]int, 0, len(byAttempt))
	for a := range byAttempt {
		attempts = append(attempts, a)
	}
	sort.Ints(attempts)
	done := map[int]int{} // step → times done
	reached := 0          // highest step done by earlier attempts
	for i, a := range attempts {
		ss := byAttempt[a]
		for k, s := range ss {
			if s != ss[0]+k {
				t.Errorf("job %s attempt %d: steps %v are not contiguous", id, a, ss)
				break
			}
		}
		if i == 0 && ss[0] != 1 {
			t.Errorf("job %s: first attempt %d started at step %d, want 1", id, a, ss[0])
		}
		if i > 0 && ss[0] > reached+1 {
			t.Errorf("job %s attempt %d started at %d: steps %d..%d were never done", id, a, ss[0], reached+1, ss[0]-1)
		}
		for _, s := range ss {
			done[s]++
		}
		reached = max(reached, ss[len(ss)-1])
	}
	for s := 1; s <= steps; s++ {
		if done[s] == 0 {
			t.Errorf("job %s: step %d never done (attempts %v)", id, s, attempts)
		}
	}
	return attempts
}

// fmtSteps summarizes a record as the step range of each attempt.
func fmtSteps(byAttempt map[int][]int) string {
	attempts := make([]int, 0, len(byAttempt))
	for a := range byAttempt {
		attempts = append(attempts, a)
	}
	sort.Ints(attempts)
	s := ""
	for _, a := range attempts {
		ss := byAttempt[a]
		s += fmt.Sprintf(" attempt %d: %d..%d", a, ss[0], ss[len(ss)-1])
	}
	return s
}
