package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/provider"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
)

// recoveries records what the controller requeued from dead workers, and
// when.
type recoveries struct {
	mu  sync.Mutex
	at  []time.Time
	got []queues.Recovered
}

func (r *recoveries) add(x queues.Recovered) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.at, r.got = append(r.at, time.Now()), append(r.got, x)
}

func (r *recoveries) first() (time.Time, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.at) == 0 {
		return time.Time{}, 0
	}
	return r.at[0], len(r.at)
}

// stepsConfig writes a config for worker processes of plane p with the
// e2e-steps template; edit may change timings. It returns the config (with
// its catalog source) and its path.
func stepsConfig(t *testing.T, p *plane, edit func(*config.Config)) string {
	t.Helper()
	cfg := stepsTemplateConfig()
	dir := t.TempDir()
	cfg.Namespace = p.ns
	cfg.Redis.Addr = testenv.RedisAddr()
	cfg.NATS.URL = p.srv.ClientURL()
	cfg.NATS.SubjectPrefix = p.ns
	cfg.NATS.Stream = "E" + p.ns
	cfg.HTTP.Listen = "127.0.0.1:0"
	cfg.Worker.PollInterval = jobs.Duration(10 * time.Millisecond)
	cfg.Worker.LogDir = filepath.Join(dir, "logs")
	cfg.Worker.CheckpointDir = filepath.Join(dir, "checkpoints")
	if edit != nil {
		edit(&cfg)
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatalf("marshal config: %v", err)
	}
	path := filepath.Join(dir, "ballast.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(path); err != nil {
		t.Fatalf("the written config does not load: %v\n%s", err, data)
	}
	return path
}

func stepsTemplateConfig() config.Config {
	cfg := config.Dev()
	cfg.Templates["e2e-steps"] = jobs.Template{
		Command: []string{"@ballast", "example-job", "--steps", "${steps}", "--step-time", "100ms", "--record", "${record}"},
		Class:   jobs.ClassCore, Checkpointable: true, Retryable: true, Grace: jobs.Duration(5 * time.Second),
		Params: map[string]jobs.ParamSpec{
			"steps":  {Type: jobs.ParamInt, Required: true},
			"record": {Type: jobs.ParamString, Required: true},
		},
	}
	return cfg
}

func stepsCatalog(t *testing.T) *jobs.Catalog {
	t.Helper()
	cat, err := stepsTemplateConfig().Catalog()
	if err != nil {
		t.Fatalf("catalog: %v", err)
	}
	return cat
}

// startWorkerProc starts a fixed `ballast worker` of 2 slots with extra
// flags (a later --slots wins); the test's end stops it, waking it first in
// case the test paused it.
func startWorkerProc(t *testing.T, bin, cfgPath, name string, extra ...string) *child {
	t.Helper()
	args := append([]string{"worker", "--config", cfgPath, "--pool", "fixed", "--slots", "2"}, extra...)
	return startChild(t, bin, filepath.Join(t.TempDir(), name+".log"), args...)
}

// submitSteps submits an e2e-steps job of n steps (100 ms each) recording
// into record.
func submitSteps(t *testing.T, p *plane, n int, record string) string {
	t.Helper()
	recJSON, _ := json.Marshal(record)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := client.NewNATS(p.conn(t), p.subj).Submit(ctx, jobs.Submission{Template: "e2e-steps",
		Params: map[string]json.RawMessage{"steps": json.RawMessage(strconv.Itoa(n)), "record": recJSON}})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	return r.JobID
}

// TestWorkerRestartUnderSameIDRequeuesAtOnce: a worker process is paused
// (SIGSTOP) while it runs a checkpointing job, and a new process starts with
// the same --id. The job is requeued at the new process's registration, not
// by the controller's dead-worker detection (which never fires: the ID keeps
// beating), resumes from its checkpoint and succeeds once. The old process,
// resumed, is fenced and records nothing.
func TestWorkerRestartUnderSameIDRequeuesAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	bin := ballastBinary(t)
	var rec recoveries
	p := newPlane(t, stepsCatalog(t), &controller.Options{OnRecover: rec.add}) // default timings
	cfgPath := stepsConfig(t, p, nil)
	record := filepath.Join(t.TempDir(), "record.txt")

	old := startWorkerProc(t, bin, cfgPath, "old", "--id", "w1")
	id := submitSteps(t, p, 40, record)
	testenv.Eventually(t, 30*time.Second, "the job running on w1 with a checkpoint >= 3", func() bool {
		j := p.getJob(t, id)
		return j.State == jobs.StateRunning && j.Worker == "w1" && checkpointStep(j.Checkpoint) >= 3
	})
	if err := old.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	cpAtPause := checkpointStep(p.getJob(t, id).Checkpoint)

	started := time.Now()
	fresh := startWorkerProc(t, bin, cfgPath, "new", "--id", "w1")
	testenv.Eventually(t, 30*time.Second, "the job requeued as attempt 2", func() bool {
		return p.getJob(t, id).Attempt >= 2
	})
	requeued := time.Since(started)
	t.Logf("new process start to requeue: %s (pause to requeue %s; worker_ttl %s)", requeued.Round(time.Millisecond),
		time.Since(paused).Round(time.Millisecond), controller.DefaultWorkerTTL)
	if at, n := rec.first(); n != 0 {
		t.Fatalf("the controller's dead-worker detection requeued it (%s after the pause), not the registration", at.Sub(paused))
	}
	testenv.Eventually(t, 5*time.Second, "the new process to report the takeover", func() bool {
		return strings.Contains(fresh.log(), "requeued a job of this worker ID's previous process")
	})
	testenv.Eventually(t, 30*time.Second, "the job succeeded", func() bool {
		j := p.getJob(t, id)
		if j.State.Terminal() && j.State != jobs.StateSucceeded {
			t.Fatalf("job ended %s: %s\nnew worker:\n%s", j.State, j.LastError, fresh.log())
		}
		return j.State == jobs.StateSucceeded
	})
	final := p.getJob(t, id)
	if final.Attempt != 2 {
		t.Fatalf("succeeded at attempt %d, want 2", final.Attempt)
	}
	a2 := readRecord(t, record)[2]
	if len(a2) == 0 || a2[0] != cpAtPause+1 || a2[len(a2)-1] != 40 {
		t.Fatalf("attempt 2 did steps %v, want %d..40", a2, cpAtPause+1)
	}

	// The old process wakes: its next beat finds it fenced, it stops its
	// attempt unrecorded.
	if err := old.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "the resumed old process to find itself fenced", func() bool {
		return strings.Contains(old.log(), "fenced")
	})
	// Let the old process settle whatever it would: it stops its job, and a
	// stale attempt's end must not reach the record. Its own SIGTERM drain
	// is the last chance to write anything.
	_ = old.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-old.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the old process did not stop")
	}
	after := p.getJob(t, id)
	if after.State != jobs.StateSucceeded || after.Attempt != 2 || !after.FinishedAt.Equal(final.FinishedAt) || after.LastError != final.LastError {
		t.Fatalf("the old process changed the record: %s attempt %d finished %s (was %s) error %q",
			after.State, after.Attempt, after.FinishedAt, final.FinishedAt, after.LastError)
	}
	if _, n := rec.first(); n != 0 {
		t.Fatalf("the controller recovered %d jobs; the takeover should have left none", n)
	}
}

// TestKillToRequeueTimings measures SIGKILL of a worker process to its job
// requeued by the controller: with the old defaults (heartbeat 1 s, TTL 5 s,
// detection on the 1 s tick), the new defaults, and a worker the local
// provider started, whose exit the controller sees. The figures are timing
// goals, so they are logged, not asserted; what is asserted is that the job
// was requeued by the path under test.
func TestKillToRequeueTimings(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	bin := ballastBinary(t)
	cases := []struct {
		name      string
		opts      controller.Options
		heartbeat time.Duration
	}{
		{"old defaults", controller.Options{Tick: time.Second, WorkerTTL: 5 * time.Second, RecoverEvery: time.Hour}, time.Second},
		{"defaults", controller.Options{}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rec recoveries
			o := c.opts
			o.OnRecover = rec.add
			p := newPlane(t, stepsCatalog(t), &o)
			cfgPath := stepsConfig(t, p, func(cfg *config.Config) { cfg.Worker.Heartbeat = jobs.Duration(c.heartbeat) })
			w := startWorkerProc(t, bin, cfgPath, "victim", "--id", "victim")
			id := submitSteps(t, p, 600, filepath.Join(t.TempDir(), "record.txt"))
			testenv.Eventually(t, 30*time.Second, "the job running", func() bool {
				return p.getJob(t, id).State == jobs.StateRunning
			})
			// Kill at a random phase of the heartbeat, as a crash would.
			if err := w.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed := time.Now()
			testenv.Eventually(t, 20*time.Second, "the job requeued", func() bool { _, n := rec.first(); return n > 0 })
			at, _ := rec.first()
			t.Logf("%s: kill to requeue %s", c.name, at.Sub(killed).Round(time.Millisecond))
		})
	}
	t.Run("local provider exit", func(t *testing.T) { killLocalWorker(t, bin) })
}

// killLocalWorker starts a worker through the local provider, SIGKILLs it,
// and measures until the controller requeues its job on the provider's
// report of the exit.
func killLocalWorker(t *testing.T, bin string) {
	var rec recoveries
	exits := make(chan string, 1)
	p := newPlane(t, stepsCatalog(t), &controller.Options{OnRecover: rec.add, Exited: exits})
	cfgPath := stepsConfig(t, p, nil)
	local, err := provider.NewLocal(provider.LocalOptions{Binary: bin, ConfigPath: cfgPath, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = local.Close() })
	// The controller was built before the provider could be (the config
	// names the plane's namespace): relay the provider's reports to it.
	go func() {
		for id := range local.Exits() {
			exits <- id
		}
	}()
	insts, err := local.Launch(context.Background(), "fixed", 1)
	if err != nil || len(insts) != 1 {
		t.Fatalf("launch: %v %v", insts, err)
	}
	id := submitSteps(t, p, 600, filepath.Join(t.TempDir(), "record.txt"))
	var pid int
	testenv.Eventually(t, 30*time.Second, "the job running on the launched worker", func() bool {
		j := p.getJob(t, id)
		if j.State != jobs.StateRunning || j.Worker != insts[0].ID {
			return false
		}
		ws, err := registry.New(p.store).Workers(context.Background())
		for _, w := range ws {
			if w.ID == insts[0].ID {
				pid = w.PID
			}
		}
		return err == nil && pid > 0
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	testenv.Eventually(t, 20*time.Second, "the job requeued", func() bool { _, n := rec.first(); return n > 0 })
	at, _ := rec.first()
	elapsed := at.Sub(killed)
	t.Logf("local provider exit: kill to requeue %s", elapsed.Round(time.Millisecond))
	// Correctness, not speed: a requeue before the TTL could have passed
	// can only come from the exit report.
	if elapsed >= controller.DefaultWorkerTTL {
		t.Fatalf("requeued %s after the kill: the exit report was not acted on", elapsed)
	}
}
