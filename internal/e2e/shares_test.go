package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/model/cost"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// Timings of the shares scenario: the hybrid tests' tick and grace.
const (
	shTick  = 200 * time.Millisecond
	shGrace = 2 * time.Second
)

// sharesRig is a controller process and one 4-slot fixed worker process of
// the ballast binary, on the test Redis and a NATS of the test's own, with
// the quota shared by teams a and b, two slots each.
type sharesRig struct {
	bin, cfgPath, dir string
	store             *queues.Store
	cl                *client.NATS
	ctl, worker       *child
	api               string
}

func newSharesRig(t *testing.T) *sharesRig {
	t.Helper()
	bin := ballastBinary(t)
	rdb, ns := testenv.Redis(t)
	srv := testenv.NATS(t)
	dir := t.TempDir()
	cfg := config.Dev()
	cfg.Namespace = ns
	cfg.Redis.Addr = testenv.RedisAddr()
	cfg.NATS.URL = srv.ClientURL()
	cfg.NATS.SubjectPrefix = ns
	cfg.NATS.Stream = "E" + ns
	cfg.HTTP.Listen = "127.0.0.1:0"
	cfg.Controller.Tick = jobs.Duration(shTick)
	cfg.Controller.WorkerTTL = jobs.Duration(2 * time.Second)
	cfg.Controller.LeaderTTL = jobs.Duration(time.Second)
	cfg.Worker.Heartbeat = jobs.Duration(200 * time.Millisecond)
	cfg.Worker.PollInterval = jobs.Duration(10 * time.Millisecond)
	cfg.Worker.LogDir = filepath.Join(dir, "logs")
	cfg.Worker.CheckpointDir = filepath.Join(dir, "checkpoints")
	cfg.Pools = map[string]config.PoolConfig{"fixed": {Kind: config.PoolFixed, Slots: 4, PricePerSlotHour: 2}}
	cfg.Pipelines = nil
	// A checkpointable, retryable core job counting 100 ms steps: it may
	// borrow, as its grace plus a tick fits in reclaim_within.
	cfg.Templates = map[string]jobs.Template{"sh-steps": {
		Command: []string{bin, "example-job", "--steps", "${steps}", "--step-time", "100ms", "--checkpoint-every", "1", "--record", "${record}"},
		Class:   jobs.ClassCore, Checkpointable: true, Retryable: true, Grace: jobs.Duration(shGrace),
		Params: map[string]jobs.ParamSpec{
			"steps":  {Type: jobs.ParamInt, Required: true},
			"record": {Type: jobs.ParamString, Required: true},
		},
	}}
	within := jobs.Duration(10 * time.Second)
	cfg.Shares = config.SharesConfig{Teams: map[string]config.TeamShare{
		"a": {Slots: 2, ReclaimWithin: within}, "b": {Slots: 2, ReclaimWithin: within}}}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &sharesRig{bin: bin, dir: dir, cfgPath: filepath.Join(dir, "ballast.yaml"), store: queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})}
	if err := os.WriteFile(r.cfgPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(r.cfgPath); err != nil {
		t.Fatalf("the written config does not load: %v\n%s", err, data)
	}
	r.ctl = startChild(t, bin, filepath.Join(dir, "ctl.log"), "controller", "--config", r.cfgPath, "--provider", "none")
	apiRe := regexp.MustCompile(`HTTP API on http://(\S+)`)
	testenv.Eventually(t, 30*time.Second, "the controller is running", func() bool {
		if r.ctl.exited() {
			t.Fatalf("the controller exited:\n%s", r.ctl.log())
		}
		if m := apiRe.FindStringSubmatch(r.ctl.log()); m != nil {
			r.api = m[1]
			return true
		}
		return false
	})
	r.worker = startWorkerProc(t, bin, r.cfgPath, "fixed-1", "--slots", "4")
	r.cl = client.NewNATS(testenv.NATSConn(t, srv), events.Subjects{Prefix: ns})
	return r
}

// submit submits an sh-steps job of team of n steps.
func (r *sharesRig) submit(t *testing.T, team string, i, steps int) string {
	t.Helper()
	rec, _ := json.Marshal(filepath.Join(r.dir, fmt.Sprintf("%s-%d.rec", team, i)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := r.cl.Submit(ctx, jobs.Submission{Template: "sh-steps", Team: team,
		Params: map[string]json.RawMessage{"steps": json.RawMessage(strconv.Itoa(steps)), "record": rec}})
	if err != nil {
		t.Fatalf("submit %s %d: %v", team, i, err)
	}
	return res.JobID
}

func (r *sharesRig) job(t *testing.T, id string) jobs.Job {
	t.Helper()
	j, err := r.store.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	if j.State == jobs.StateFailed || j.State == jobs.StateCancelled {
		t.Fatalf("job %s (team %s) %s: %s\ncontroller:\n%s\nworker:\n%s", id, j.Spec.Team, j.State, j.LastError, tail(r.ctl.log(), 4000), tail(r.worker.log(), 4000))
	}
	return j
}

func (r *sharesRig) get(t *testing.T, path string) string {
	t.Helper()
	res, err := http.Get("http://" + r.api + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
	}
	return string(b)
}

// TestSharesOwnerGetsItsShareBack is issue 33's end-to-end check: team a
// fills the 4-slot quota with checkpointable core jobs, two of them on
// b's idle share; b then submits two core jobs, which start within a
// tick plus the victims' grace plus 2 s, while a's two in-share jobs
// run on. The settlement shows a paying b for the loan.
func TestSharesOwnerGetsItsShareBack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	r := newSharesRig(t)
	var as []string
	for i := range 4 {
		as = append(as, r.submit(t, "a", i, 600)) // 60 s: they run through the scenario
	}
	testenv.Eventually(t, 20*time.Second, "a's four jobs running on the fixed worker, checkpointed", func() bool {
		for _, id := range as {
			if j := r.job(t, id); j.State != jobs.StateRunning || checkpointStep(j.Checkpoint) < 2 {
				return false
			}
		}
		return true
	})
	// Let the loan last long enough to be worth settling. Until b asks,
	// nothing takes a's loans back: no slot is free when b submits.
	time.Sleep(2 * time.Second)
	for _, id := range as {
		if j := r.job(t, id); j.State != jobs.StateRunning || j.Preemptions != 0 {
			t.Fatalf("before b submits, a's job %s is %s after %d preemptions; want running, never preempted", id, j.State, j.Preemptions)
		}
	}

	submitted := time.Now()
	bs := []string{r.submit(t, "b", 0, 30), r.submit(t, "b", 1, 30)}
	limit := shTick + shGrace + 2*time.Second
	started := map[string]time.Time{}
	testenv.Eventually(t, limit+3*time.Second, "b's two jobs running", func() bool {
		for _, id := range bs {
			if j := r.job(t, id); j.State == jobs.StateRunning || j.State == jobs.StateSucceeded {
				started[id] = j.StartedAt
			}
		}
		return len(started) == len(bs)
	})
	for id, at := range started {
		wait := at.Sub(submitted)
		t.Logf("b's job %s started %s after its submission (limit %s: tick %s + grace %s + 2s)", id, wait.Round(time.Millisecond), limit, shTick, shGrace)
		if wait > limit {
			t.Errorf("b's job %s started %s after its submission, over the %s the guarantee allows", id, wait.Round(time.Millisecond), limit)
		}
	}
	// Exactly two of a's jobs were reclaimed, back in held to wait for
	// room; the other two ran on without a preemption.
	var reclaimed, ranOn int
	for _, id := range as {
		j := r.job(t, id)
		switch {
		case j.Preemptions == 0 && j.State == jobs.StateRunning && j.Runs == 1:
			ranOn++
		case j.Preemptions == 1 && j.State == jobs.StateQueued && j.Queue == string(queues.QueueHeld) && checkpointStep(j.Checkpoint) >= 2:
			reclaimed++
		default:
			t.Errorf("a's job %s: %s in %s, attempt %d, run %d, %d preemptions, checkpoint %q", id, j.State, j.Queue, j.Attempt, j.Runs, j.Preemptions, j.Checkpoint)
		}
	}
	if reclaimed != 2 || ranOn != 2 {
		t.Errorf("a's jobs: %d reclaimed to held and %d ran on; want 2 and 2", reclaimed, ranOn)
	}

	// The leader's metrics name who lost the slots, who took them back
	// and the rule; the overview's share bars show b in its share.
	metrics := r.get(t, "/metrics")
	if !strings.Contains(metrics, `ballast_share_reclaims_total{owner="b",rule="9",team="a"} 2`) {
		t.Errorf("no two reclaims of a's loans for b in the metrics:\n%s", grepLines(metrics, "ballast_share"))
	}
	var ov struct {
		Shares struct {
			Teams []struct {
				Team string  `json:"team"`
				Own  float64 `json:"own"`
				Used float64 `json:"used"`
			} `json:"teams"`
		} `json:"shares"`
	}
	if err := json.Unmarshal([]byte(r.get(t, "/api/v1/overview")), &ov); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(ov.Shares.Teams); got != "[{a 2 2} {b 2 2}]" {
		t.Errorf("overview shares %s, want a and b each on its own 2 slots", got)
	}

	out, errOut, code := runBallast(t, r.bin, "cost", "--config", r.cfgPath, "--window", "1h", "--by", "team", "--settle", "-o", "json")
	if code != 0 {
		t.Fatalf("ballast cost: exit %d: %s", code, errOut)
	}
	var got struct {
		Report     cost.Report
		Settlement cost.Settlement
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("ballast cost -o json: %v\n%s", err, out)
	}
	byTeam := map[string]cost.TeamSettlement{}
	for _, ts := range got.Settlement.Teams {
		byTeam[ts.Team] = ts
	}
	a, b := byTeam["a"], byTeam["b"]
	t.Logf("settlement: a borrowed %.4f slot-h, paid %.4f; b lent, credit %.4f; total %.4f",
		a.BorrowedSlotHours, a.LoanPaid, b.LoanCredit, got.Settlement.Total)
	if a.LoanPaid <= 0 || b.LoanCredit <= 0 || math.Abs(a.LoanPaid-b.LoanCredit) > 1e-9 {
		t.Errorf("a's loan paid %v and b's loan credit %v: want equal and positive", a.LoanPaid, b.LoanCredit)
	}
	if d := got.Settlement.Sum() - got.Report.Total.PaidCost; math.Abs(d) > 1e-9*math.Max(got.Report.Total.PaidCost, 1) {
		t.Errorf("the nets add up to %v, not the %v paid", got.Settlement.Sum(), got.Report.Total.PaidCost)
	}
}

// runBallast runs the binary and returns its output, error output and
// exit code.
func runBallast(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("ballast %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return stdout.String(), stderr.String(), code
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
