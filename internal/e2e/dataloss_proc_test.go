package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"gopkg.in/yaml.v3"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// lossRig is a deployment of processes (a controller and two workers of
// the ballast binary) on a redis-server and a NATS of the test's own, whose
// jobs append a line to one file when they start and one when they end.
type lossRig struct {
	bin, cfgPath, record string
	redis                *exec.Cmd
	addr, ns             string
	port                 int
	ctl                  *child
	workers              []*child
	api                  string // the controller's HTTP address
	cl                   *client.NATS
}

// dlJobs, dlWorkers and dlSlots size the load: more jobs than slots, so
// that the loss finds jobs ended, running and waiting.
const dlJobs, dlWorkers, dlSlots = 60, 2, 4

// dlMark is the jobs' command: "ID ATTEMPT start T" when a run begins and
// "ID ATTEMPT done T" when it has slept its time, the side effect counted,
// each with the time (Unix seconds), to set beside the processes' logs.
const dlMark = `echo "$BALLAST_JOB_ID $BALLAST_ATTEMPT start $(date +%s.%N)" >> "$1"; sleep "$2"; echo "$BALLAST_JOB_ID $BALLAST_ATTEMPT done $(date +%s.%N)" >> "$1"`

func newLossRig(t *testing.T, recoverOnLoss bool) *lossRig {
	t.Helper()
	bin := ballastBinary(t)
	proc, addr := privateRedis(t)
	_, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	srv := testenv.NATS(t)
	ns := fmt.Sprintf("dl%d", time.Now().UnixNano()%1e9)

	dir := t.TempDir()
	cfg := config.Dev()
	cfg.Templates["dl-mark"] = jobs.Template{
		Command: []string{"sh", "-c", dlMark, "sh", "${record}", "${seconds}"},
		Class:   jobs.ClassCore, Grace: jobs.Duration(time.Second),
		Params: map[string]jobs.ParamSpec{
			"record":  {Type: jobs.ParamString, Required: true},
			"seconds": {Type: jobs.ParamFloat, Required: true},
		},
	}
	cfg.Namespace = ns
	cfg.Redis.Addr = addr
	cfg.Redis.RecoverOnLoss = recoverOnLoss
	cfg.NATS.URL = srv.ClientURL()
	cfg.NATS.SubjectPrefix = ns
	cfg.NATS.Stream = "E" + ns
	cfg.HTTP.Listen = "127.0.0.1:0"
	cfg.Controller.Tick = jobs.Duration(200 * time.Millisecond)
	cfg.Controller.WorkerTTL = jobs.Duration(2 * time.Second)
	cfg.Controller.LeaderTTL = jobs.Duration(2 * time.Second)
	cfg.Worker.Heartbeat = jobs.Duration(200 * time.Millisecond)
	cfg.Worker.PollInterval = jobs.Duration(10 * time.Millisecond)
	cfg.Worker.LogDir = filepath.Join(dir, "logs")
	cfg.Worker.CheckpointDir = filepath.Join(dir, "checkpoints")
	data, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "ballast.yaml")
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(cfgPath); err != nil {
		t.Fatalf("the written config does not load: %v\n%s", err, data)
	}
	r := &lossRig{bin: bin, cfgPath: cfgPath, record: filepath.Join(dir, "runs.txt"), redis: proc, addr: addr, ns: ns, port: port}
	// The Redis started after the loss is stopped after the processes
	// (cleanups run last first): a worker stopping drains into it.
	t.Cleanup(func() {
		if r.redis != proc {
			stopRedis(r.redis)
		}
	})
	r.ctl = startChild(t, bin, filepath.Join(dir, "ctl.log"), "controller", "--config", cfgPath, "--provider", "none")
	apiRe := regexp.MustCompile(`HTTP API on http://(\S+)`)
	testenv.Eventually(t, 30*time.Second, "the controller is running", func() bool {
		if r.ctl.exited() {
			t.Fatalf("the controller exited:\n%s", r.ctl.log())
		}
		m := apiRe.FindStringSubmatch(r.ctl.log())
		if m != nil {
			r.api = m[1]
		}
		return m != nil
	})
	for i := range dlWorkers {
		r.workers = append(r.workers, startWorkerProc(t, bin, cfgPath, fmt.Sprintf("worker%d", i), "--slots", strconv.Itoa(dlSlots)))
	}
	r.cl = client.NewNATS(testenv.NATSConn(t, srv), events.Subjects{Prefix: ns})
	return r
}

// submit submits job i, of a run time between 0.3 and 1.1 s.
func (r *lossRig) submit(t *testing.T, i int) string {
	t.Helper()
	rec, _ := json.Marshal(r.record)
	secs := 0.3 + float64(i%5)*0.2
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := r.cl.Submit(ctx, jobs.Submission{Template: "dl-mark", IdempotencyKey: fmt.Sprintf("dl-%d", i),
		Params: map[string]json.RawMessage{"record": rec, "seconds": json.RawMessage(strconv.FormatFloat(secs, 'f', 1, 64))}})
	if err != nil {
		t.Fatalf("submit %d: %v", i, err)
	}
	return res.JobID
}

// runs reads the record: per job ID, the attempts that started and those
// whose run completed (its side effect done).
type runs struct {
	started, done map[string][]int
}

func (r *lossRig) runs(t *testing.T) runs {
	t.Helper()
	out := runs{started: map[string][]int{}, done: map[string][]int{}}
	f, err := os.Open(r.record)
	if os.IsNotExist(err) {
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 4 {
			t.Fatalf("record: bad line %q", sc.Text())
		}
		a, err := strconv.Atoi(fields[1])
		if err != nil {
			t.Fatalf("record: bad line %q", sc.Text())
		}
		switch fields[2] {
		case "start":
			out.started[fields[0]] = append(out.started[fields[0]], a)
		case "done":
			out.done[fields[0]] = append(out.done[fields[0]], a)
		default:
			t.Fatalf("record: bad line %q", sc.Text())
		}
	}
	return out
}

// ballast runs the binary with args and the rig's config, and returns its
// standard output, its standard error and its exit code.
func (r *lossRig) ballast(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bin, append(args, "--config", r.cfgPath)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("ballast %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return stdout.String(), stderr.String(), code
}

// apiStatus is GET /api/v1/status of the controller.
func (r *lossRig) apiStatus(t *testing.T) string {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + r.api + "/api/v1/status")
	if err != nil {
		t.Fatalf("GET /api/v1/status: %v", err)
	}
	return readAll(t, resp)
}

// linesOf is what the processes logged about job id, and of the loss.
func (r *lossRig) linesOf(id string) string {
	var b strings.Builder
	rec, _ := os.ReadFile(r.record)
	for _, line := range strings.Split(string(rec), "\n") {
		if strings.HasPrefix(line, id+" ") {
			fmt.Fprintf(&b, "record: %s\n", line)
		}
	}
	for _, c := range append([]*child{r.ctl}, r.workers...) {
		for _, line := range strings.Split(c.log(), "\n") {
			if strings.Contains(line, id) || strings.Contains(line, "Redis lost") || strings.Contains(line, "rebuilt the jobs") {
				fmt.Fprintf(&b, "%s: %s\n", filepath.Base(c.out), line)
			}
		}
	}
	return b.String()
}

// restartRedisEmpty kills Redis and starts it again, empty, on its port.
func (r *lossRig) restartRedisEmpty(t *testing.T) {
	t.Helper()
	if err := r.redis.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r.redis = startRedisOn(t, r.port)
}

// TestRedisRestartedEmptyUnderLoad: a deployment of processes runs 60
// jobs; while some have ended, some run and the rest wait, its Redis
// (without persistence) is killed and started again empty. `ballast
// status` and the API say "Redis lost its data at ..." within about a
// controller tick, status exits non-zero, and after recovery (`ballast
// recover`, or the leader on its own with redis.recover_on_loss) every
// accepted job either finished once before the loss or ran once after it,
// counted from the jobs' own record against the submissions.
func TestRedisRestartedEmptyUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	for _, tc := range []struct {
		name string
		auto bool
	}{{"ballast recover", false}, {"recover_on_loss", true}} {
		t.Run(tc.name, func(t *testing.T) { lossUnderLoad(t, tc.auto) })
	}
}

func lossUnderLoad(t *testing.T, auto bool) {
	r := newLossRig(t, auto)
	ids := make([]string, dlJobs)
	for i := range ids {
		ids[i] = r.submit(t, i)
	}
	testenv.Eventually(t, 30*time.Second, "a third of the jobs done", func() bool {
		return len(r.runs(t).done) >= dlJobs/3
	})
	killed := time.Now()
	r.restartRedisEmpty(t)
	back := time.Now()
	atLoss := r.runs(t)

	// The loss said: status exits non-zero naming it, and the API has it.
	var statusOut string
	testenv.Eventually(t, 10*time.Second, "ballast status reports the loss", func() bool {
		out, errOut, code := r.ballast(t, "status")
		statusOut = out
		return code != 0 && strings.Contains(out, "Redis lost its data at ") && strings.Contains(errOut, "Redis lost its data at ")
	})
	detected := time.Since(back)
	if body := r.apiStatus(t); !strings.Contains(body, `"data_loss"`) || !strings.Contains(body, "epoch_") {
		t.Errorf("GET /api/v1/status after the loss lacks data_loss: %s", body)
	}
	for _, line := range strings.Split(statusOut, "\n") {
		if strings.Contains(line, "DATA LOSS") {
			t.Logf("status: %s", line)
		}
	}

	var rep controller.RecoverReport
	if auto {
		testenv.Eventually(t, 20*time.Second, "the leader rebuilt the lost jobs and cleared the record", func() bool {
			_, _, code := r.ballast(t, "status")
			return code == 0
		})
		t.Logf("the leader rebuilt the lost jobs and cleared the record %s after Redis answered again (it waits for the workers to settle)",
			time.Since(back).Round(time.Millisecond))
	} else {
		began := time.Now()
		out, errOut, code := r.ballast(t, "recover", "-o", "json")
		t.Logf("ballast recover took %s (it waits for the workers to settle)", time.Since(began).Round(time.Millisecond))
		if code != 0 {
			t.Fatalf("ballast recover exited %d:\n%s%s", code, out, errOut)
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("ballast recover -o json: %v\n%s", err, out)
		}
		t.Logf("recover: %+v", rep)
		// The dev config's own schedules add a job or two to what the
		// stream names as accepted.
		if rep.Accepted < dlJobs || rep.NoSpec != 0 || !rep.Cleared || rep.Rebuilt+rep.SkippedFinished < dlJobs {
			t.Errorf("recover report %+v: want all %d submissions rebuilt or skipped as finished, the record cleared", rep, dlJobs)
		}
		if out, _, code := r.ballast(t, "status"); code != 0 {
			t.Errorf("status after recover exited %d:\n%s", code, out)
		}
	}

	// Every accepted job has run to its end, and none waits or runs: a
	// job rebuilt although it had finished would still be on record.
	rdb := redis.NewClient(&redis.Options{Addr: r.addr})
	t.Cleanup(func() { _ = rdb.Close() })
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: r.ns})
	testenv.Eventually(t, 40*time.Second, "every accepted job done, none waiting or running", func() bool {
		if len(r.runs(t).done) != dlJobs {
			return false
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, id := range ids {
			j, err := store.Get(ctx, id)
			if err == nil && !j.State.Terminal() || err != nil && !errors.Is(err, jobs.ErrNotFound) {
				return false
			}
		}
		return true
	})
	// Recovery is repeatable: nothing is left to rebuild.
	out, errOut, code := r.ballast(t, "recover", "-o", "json")
	var again controller.RecoverReport
	if err := json.Unmarshal([]byte(out), &again); code != 0 || err != nil || again.Rebuilt != 0 || again.Accepted < dlJobs {
		t.Errorf("a second ballast recover exited %d (%v), want nothing rebuilt:\n%s%s", code, err, out, errOut)
	}
	for _, w := range r.workers {
		if w.exited() {
			t.Errorf("a worker exited:\n%s", w.log())
		}
	}
	end := r.runs(t)
	lost, doubled, before, after, cut := 0, 0, 0, 0, 0
	for _, id := range ids {
		switch n := len(end.done[id]); {
		case n == 0:
			lost++
		case n > 1:
			doubled++
			t.Errorf("job %s completed %d times (attempts %v, started %v); the processes said of it:\n%s", id, n,
				end.done[id], end.started[id], r.linesOf(id))
		}
		if len(atLoss.done[id]) > 0 {
			before++
		} else {
			after++
		}
		cut += len(end.started[id]) - len(end.done[id])
	}
	if len(end.done) != dlJobs {
		t.Errorf("the record names %d jobs done, %d were submitted", len(end.done), dlJobs)
	}
	t.Logf("accepted %d: lost %d, doubled %d, finished before the loss %d, ran after it %d (runs cut short by the loss %d); "+
		"loss reported by status %s after Redis answered again (%s after the kill; tick 200ms)",
		dlJobs, lost, doubled, before, after, cut, detected.Round(time.Millisecond), back.Sub(killed).Round(time.Millisecond)+detected.Round(time.Millisecond))
	if lost != 0 || doubled != 0 {
		t.Errorf("%d lost, %d doubled of %d accepted jobs", lost, doubled, dlJobs)
	}
	for _, w := range r.workers {
		if n := strings.Count(w.log(), "the attempt had moved on"); n > 0 {
			t.Errorf("a worker said %d times that an attempt had moved on where the loss took its record:\n%s", n, w.log())
		}
	}
}
