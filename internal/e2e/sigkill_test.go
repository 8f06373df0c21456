package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

var (
	buildOnce sync.Once
	buildDone = make(chan struct{})
	binPath   string
	binErr    error
	binDir    string
)

// buildBallast builds cmd/ballast once per test binary run. TestMain starts
// it early so that the build overlaps the tests that do not need it.
func buildBallast() {
	buildOnce.Do(func() {
		defer close(buildDone)
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			binErr = fmt.Errorf("go env GOMOD: %w", err)
			return
		}
		root := filepath.Dir(strings.TrimSpace(string(out)))
		binDir, binErr = os.MkdirTemp("", "ballast-e2e-bin")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "ballast")
		cmd := exec.Command("go", "build", "-ldflags=-s -w", "-o", binPath, "./cmd/ballast")
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, b)
		}
	})
}

func ballastBinary(t *testing.T) string {
	t.Helper()
	go buildBallast()
	<-buildDone
	if binErr != nil {
		t.Fatalf("building ballast: %v", binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	flag.Parse()
	if !testing.Short() && wantsBinary() {
		go buildBallast()
	}
	code := m.Run()
	testenv.StopRedisCluster()
	if binDir != "" {
		<-buildDone
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// wantsBinary reports whether -run may select a test that runs the binary.
func wantsBinary() bool {
	f := flag.Lookup("test.run")
	if f == nil || f.Value.String() == "" {
		return true
	}
	re, err := regexp.Compile(f.Value.String())
	return err != nil || re.MatchString("TestWorkerSIGKILLJobsCompleteElsewhereOnce")
}

// child is a `ballast worker` process.
type child struct {
	cmd  *exec.Cmd
	out  string
	done chan struct{}
}

// startChild starts bin with args, its output going to the file out. At
// the test's end a child still running is woken (it may have been paused),
// sent SIGTERM, and killed if it has not exited within 15 s.
func startChild(t *testing.T, bin, out string, args ...string) *child {
	t.Helper()
	return startChildEnv(t, bin, out, nil, args...)
}

// startChildEnv is startChild with env added to the test's environment
// (later entries win, as with exec.Cmd.Env).
func startChildEnv(t *testing.T, bin, out string, env []string, args ...string) *child {
	t.Helper()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("starting %s: %v", filepath.Base(out), err)
	}
	c := &child{cmd: cmd, out: out, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(c.done)
	}()
	t.Cleanup(func() {
		if c.exited() {
			return
		}
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-c.done
		}
	})
	return c
}

// startWorkerChild starts a 4-slot fixed `ballast worker`; the test's end
// stops it.
func startWorkerChild(t *testing.T, bin, cfgPath, name string) *child {
	t.Helper()
	return startWorkerProc(t, bin, cfgPath, name, "--slots", "4")
}

func (c *child) log() string {
	b, _ := os.ReadFile(c.out)
	return string(b)
}

// readRecord parses example-job's --record file: "ATTEMPT STEP" per line.
func readRecord(t *testing.T, path string) map[int][]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("record: %v", err)
	}
	defer f.Close()
	byAttempt := map[int][]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var a, s int
		if _, err := fmt.Sscanf(sc.Text(), "%d %d", &a, &s); err != nil {
			t.Fatalf("record %s: bad line %q", path, sc.Text())
		}
		byAttempt[a] = append(byAttempt[a], s)
	}
	return byAttempt
}

func checkpointStep(cp string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(cp, "step="))
	if err != nil {
		return -1
	}
	return n
}

func TestWorkerSIGKILLJobsCompleteElsewhereOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	const nJobs, steps = 4, 40
	t0 := time.Now()
	bin := ballastBinary(t)
	t.Logf("ballast binary ready in %s", time.Since(t0).Round(time.Millisecond))

	var recMu sync.Mutex
	var recovered []time.Time
	var recs []queues.Recovered
	ctlOpts := &controller.Options{Tick: 200 * time.Millisecond, WorkerTTL: time.Second, LeaderTTL: time.Second,
		OnRecover: func(r queues.Recovered) {
			recMu.Lock()
			defer recMu.Unlock()
			recovered = append(recovered, time.Now())
			recs = append(recs, r)
		}}

	cfg := config.Dev()
	cfg.Templates["e2e-steps"] = jobs.Template{
		Command: []string{"@ballast", "example-job", "--steps", "${steps}", "--step-time", "100ms", "--record", "${record}"},
		Class:   jobs.ClassCore, Checkpointable: true, Retryable: true, Grace: jobs.Duration(5 * time.Second),
		Params: map[string]jobs.ParamSpec{
			"steps":  {Type: jobs.ParamInt, Required: true},
			"record": {Type: jobs.ParamString, Required: true},
		},
	}
	cat, err := cfg.Catalog()
	if err != nil {
		t.Fatalf("catalog: %v", err)
	}
	p := newPlane(t, cat, ctlOpts)

	dir := t.TempDir()
	cfg.Namespace = p.ns
	cfg.Redis.Addr = testenv.RedisAddr()
	cfg.NATS.URL = p.srv.ClientURL()
	cfg.NATS.SubjectPrefix = p.ns
	cfg.NATS.Stream = "E" + p.ns
	cfg.HTTP.Listen = "127.0.0.1:0"
	cfg.Controller.Tick = jobs.Duration(200 * time.Millisecond)
	cfg.Controller.WorkerTTL = jobs.Duration(time.Second)
	cfg.Controller.LeaderTTL = jobs.Duration(time.Second)
	cfg.Worker.Heartbeat = jobs.Duration(200 * time.Millisecond)
	cfg.Worker.PollInterval = jobs.Duration(10 * time.Millisecond)
	cfg.Worker.LogDir = filepath.Join(dir, "logs")
	cfg.Worker.CheckpointDir = filepath.Join(dir, "checkpoints")
	data, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatalf("marshal config: %v", err)
	}
	cfgPath := filepath.Join(dir, "ballast.yaml")
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(cfgPath); err != nil {
		t.Fatalf("the written config does not load: %v\n%s", err, data)
	}

	first := startWorkerChild(t, bin, cfgPath, "worker1")

	cl := client.NewNATS(p.conn(t), p.subj)
	ids := make([]string, nJobs)
	records := make([]string, nJobs)
	for i := range nJobs {
		records[i] = filepath.Join(dir, fmt.Sprintf("record-%d.txt", i))
		recJSON, _ := json.Marshal(records[i])
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		r, err := cl.Submit(ctx, jobs.Submission{Template: "e2e-steps", IdempotencyKey: fmt.Sprintf("k%d", i),
			Params: map[string]json.RawMessage{"steps": json.RawMessage(strconv.Itoa(steps)), "record": recJSON}})
		cancel()
		if err != nil {
			t.Fatalf("submit %d: %v", i, err)
		}
		ids[i] = r.JobID
	}

	// All four run on the first worker and each has checkpointed a few
	// steps, so that the resume is observable.
	var victim string
	testenv.Eventually(t, 30*time.Second, "all jobs running on the first worker with a checkpoint >= 3", func() bool {
		select {
		case <-first.done:
			t.Fatalf("first worker exited early:\n%s", first.log())
		default:
		}
		workersSeen := map[string]bool{}
		for _, id := range ids {
			j := p.getJob(t, id)
			if j.State != jobs.StateRunning || checkpointStep(j.Checkpoint) < 3 {
				return false
			}
			workersSeen[j.Worker] = true
			victim = j.Worker
		}
		if len(workersSeen) != 1 {
			t.Fatalf("jobs run on %d workers, want 1: %v", len(workersSeen), workersSeen)
		}
		return true
	})

	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	killed := time.Now()
	// Checkpoints as recorded when the worker died: nothing can update them
	// until the controller requeues the jobs.
	<-first.done
	cpAtKill := make([]int, nJobs)
	for i, id := range ids {
		j := p.getJob(t, id)
		cpAtKill[i] = checkpointStep(j.Checkpoint)
		if j.Attempt != 1 {
			t.Fatalf("job %s at attempt %d before recovery", id, j.Attempt)
		}
	}

	second := startWorkerChild(t, bin, cfgPath, "worker2")
	defer func() { t.Logf("jobs done %s after the kill", time.Since(killed).Round(time.Millisecond)) }()

	testenv.Eventually(t, 60*time.Second, "every job succeeded after the kill", func() bool {
		for _, id := range ids {
			j := p.getJob(t, id)
			if j.State == jobs.StateFailed || j.State == jobs.StateCancelled {
				t.Fatalf("job %s ended %s: %s\nworker2 log:\n%s", id, j.State, j.LastError, second.log())
			}
			if j.State != jobs.StateSucceeded {
				return false
			}
		}
		return true
	})

	recMu.Lock()
	if len(recovered) != nJobs {
		t.Errorf("OnRecover told of %d jobs, want %d: %+v", len(recovered), nJobs, recs)
	}
	for _, r := range recs {
		if r.Worker != victim {
			t.Errorf("recovered job %s from worker %s, want the killed %s", r.JobID, r.Worker, victim)
		}
	}
	if len(recovered) > 0 {
		t.Logf("kill to requeue: %s (worker_ttl 1s, tick 200ms)", recovered[0].Sub(killed).Round(time.Millisecond))
	}
	recMu.Unlock()

	for i, id := range ids {
		j := p.getJob(t, id)
		if j.Attempt != 2 {
			t.Errorf("job %s: attempt %d, want 2", id, j.Attempt)
		}
		if j.Worker == victim {
			t.Errorf("job %s finished on the killed worker %s", id, victim)
		}
		byAttempt := readRecord(t, records[i])
		if len(byAttempt) != 2 {
			t.Errorf("job %s: record has attempts %v, want exactly 1 and 2", id, byAttempt)
			continue
		}
		a1, a2 := byAttempt[1], byAttempt[2]
		for k, s := range a1 {
			if s != k+1 {
				t.Errorf("job %s: attempt 1 steps %v are not 1..n in order", id, a1)
				break
			}
		}
		if len(a2) == 0 {
			t.Errorf("job %s: attempt 2 recorded no steps", id)
			continue
		}
		start := a2[0]
		for k, s := range a2 {
			if s != start+k {
				t.Errorf("job %s: attempt 2 steps %v are not contiguous", id, a2)
				break
			}
		}
		if a2[len(a2)-1] != steps {
			t.Errorf("job %s: attempt 2 ended at step %d, want %d", id, a2[len(a2)-1], steps)
		}
		// Attempt 2 resumes right after the checkpoint recorded at the kill:
		// nothing before it is redone, nothing between it and the steps
		// attempt 1 completed is skipped.
		if start != cpAtKill[i]+1 {
			t.Errorf("job %s: attempt 2 started at step %d, want checkpoint %d + 1", id, start, cpAtKill[i])
		}
		if start-1 > len(a1) {
			t.Errorf("job %s: steps %d..%d were never done (attempt 1 reached %d, attempt 2 started at %d)", id, len(a1)+1, start-1, len(a1), start)
		}
		t.Logf("job %s: attempt 1 did steps 1..%d, checkpoint at kill %d, attempt 2 did %d..%d", id, len(a1), cpAtKill[i], start, steps)
	}
}
