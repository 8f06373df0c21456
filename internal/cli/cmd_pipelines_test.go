package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/pipeline"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/flows"
)

// unreachableNATS is a URL nothing listens on: a command that must not need
// NATS fails loudly if it tries.
const unreachableNATS = "nats://127.0.0.1:1"

// flowEnv is a config file on the test's own Redis namespace with a nightly
// pipeline and a sweepable template, and the store the CLI will use.
type flowEnv struct {
	path  string
	ns    string
	cfg   config.Config
	store *queues.Store
	flows *flows.Store
}

func newFlowEnv(t *testing.T, natsURL string) flowEnv {
	t.Helper()
	rdb, ns := testenv.Redis(t)
	yaml := fmt.Sprintf(`namespace: %s
redis:
  addr: %s
nats:
  url: %s
  subject_prefix: %s
pools:
  fixed: {kind: fixed, slots: 2}
templates:
  features:
    command: ["sh", "-c", "echo $1", "sh", "${date}"]
    params: {date: {type: string, required: true}}
    rhythm: periodic
  upload:
    command: ["true"]
  trial:
    command: ["true"]
    class: burst
    params: {lr: {type: float, required: true}}
pipelines:
  nightly:
    schedule: "30 2 * * *"
    time_zone: Europe/Berlin
    deadline: "06:00"
    steps:
      build: {template: features, params: {date: today}}
      publish: {template: upload, depends_on: [build], post_processing: true}
`, ns, testenv.RedisAddr(), natsURL, ns)
	path := filepath.Join(t.TempDir(), "ballast.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatalf("test config: %v", err)
	}
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	return flowEnv{path: path, ns: ns, cfg: cfg, store: store, flows: flows.New(store)}
}

func (f flowEnv) submitter(t *testing.T) (*jobs.Catalog, *controller.Submitter) {
	t.Helper()
	cat, err := f.cfg.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	return cat, &controller.Submitter{Catalog: cat, Store: f.store, Router: controller.Router{ElasticManaged: true}}
}

// runOK runs the CLI and fails the test unless it exits 0.
func runOK(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := run(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errOut)
	}
	return out
}

// lineWith returns the first line of out containing every one of words.
func lineWith(out string, words ...string) (string, bool) {
	for _, l := range strings.Split(out, "\n") {
		all := true
		for _, w := range words {
			all = all && strings.Contains(l, w)
		}
		if all {
			return l, true
		}
	}
	return "", false
}

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestPipelinesListShowsScheduleAndNextTime(t *testing.T) {
	f := newFlowEnv(t, unreachableNATS)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	sched, err := pipeline.Parse("30 2 * * *", "Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	next := sched.Next(time.Now())

	out := runOK(t, "pipelines", "--config", f.path)
	row, ok := lineWith(out, "nightly")
	if !ok {
		t.Fatalf("no row for nightly:\n%s", out)
	}
	for _, want := range []string{"30 2 * * *", "Europe/Berlin", "forbid", "skip", next.In(berlin).Format("2006-01-02 15:04:05"), "(in "} {
		if !strings.Contains(row, want) {
			t.Errorf("row lacks %q: %q", want, row)
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(row), " -") {
		t.Errorf("LAST RUN should be - before any run: %q", row)
	}

	var list []struct {
		Name    string     `json:"name"`
		Next    time.Time  `json:"next"`
		Steps   []string   `json:"steps"`
		LastRun *flows.Run `json:"last_run"`
	}
	if err := json.Unmarshal([]byte(runOK(t, "pipelines", "list", "-o", "json", "--config", f.path)), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != "nightly" || !list[0].Next.Equal(next) || list[0].LastRun != nil ||
		strings.Join(list[0].Steps, ",") != "build,publish" {
		t.Fatalf("json list %+v, want nightly next at %s with steps build,publish and no run", list, next)
	}
	if code, _, errOut := run(t, "pipelines", "frobnicate", "--config", f.path); code != 2 || !strings.Contains(errOut, "trigger NAME") {
		t.Errorf("unknown verb: code %d, stderr %q", code, errOut)
	}
}

func TestPipelinesTriggerRunsShowAndCancel(t *testing.T) {
	srv := testenv.NATS(t)
	f := newFlowEnv(t, srv.ClientURL())
	ctx := context.Background()

	// The CLI publishes the run's events for followers.
	nc := testenv.NATSConn(t, srv)
	seen := testenv.CollectEvents(t, nc, subjects(f.cfg).Pipeline("nightly"))
	sawEvent := func(typ events.Type, runID string) func() bool {
		return func() bool {
			return seen.Any(func(ev events.Event) bool { return ev.Type == typ && ev.RunID == runID })
		}
	}

	out := runOK(t, "pipelines", "trigger", "nightly", "--config", f.path)
	runs, err := f.flows.ListRuns(ctx, "nightly", 10)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs after trigger: %v %v", runs, err)
	}
	r := runs[0]
	if !strings.Contains(out, r.ID) || !strings.Contains(out, "within a tick") {
		t.Errorf("trigger output lacks the run ID or what happens next:\n%s", out)
	}
	if r.State != pipeline.RunRunning || r.Trigger != flows.TriggerManual || r.Deadline.IsZero() {
		t.Fatalf("run %+v", r)
	}
	// RecordOnly: the leader, not the CLI, submits the steps.
	for name, st := range r.Steps {
		if st.State != pipeline.StepPending || st.JobID != "" {
			t.Fatalf("step %s is %+v right after the trigger, want pending without a job", name, st)
		}
	}
	testenv.Eventually(t, 5*time.Second, "the run-started event", sawEvent(events.TypePipelineRunStarted, r.ID))

	out = runOK(t, "pipelines", "runs", "nightly", "--config", f.path)
	row, ok := lineWith(out, r.ID)
	if !ok {
		t.Fatalf("runs lacks %s:\n%s", r.ID, out)
	}
	for _, want := range []string{"manual", "running", "0/2 succeeded", "06:00:00"} {
		if !strings.Contains(row, want) {
			t.Errorf("runs row lacks %q: %q", want, row)
		}
	}

	out = runOK(t, "pipelines", "show", r.ID, "--config", f.path)
	build, publish := strings.Index(out, "\nbuild "), strings.Index(out, "\npublish ")
	if build < 0 || publish < build {
		t.Fatalf("steps not listed in DAG order (build, then publish):\n%s", out)
	}
	if l, _ := lineWith(out, "publish ", "pending"); !strings.HasSuffix(strings.TrimSpace(l), "build") {
		t.Errorf("publish should be pending and depend on build: %q\n%s", l, out)
	}
	for _, want := range []string{"nightly", "manual", "06:00:00"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	var shown flows.Run
	if err := json.Unmarshal([]byte(runOK(t, "pipelines", "show", "-o", "json", r.ID, "--config", f.path)), &shown); err != nil {
		t.Fatal(err)
	}
	if shown.ID != r.ID || len(shown.Steps) != 2 || shown.Definition.Steps["publish"].DependsOn[0] != "build" {
		t.Fatalf("show -o json: %+v", shown)
	}

	// Errors name what to do.
	code, _, errOut := run(t, "pipelines", "trigger", "nightly", "--config", f.path)
	if code != 1 || !strings.Contains(errOut, "overlap is forbid") || !strings.Contains(errOut, "pipelines cancel "+r.ID) {
		t.Errorf("second trigger: code %d, stderr %q", code, errOut)
	}
	code, _, errOut = run(t, "pipelines", "trigger", "nope", "--config", f.path)
	if code != 1 || !strings.Contains(errOut, `"nope"`) || !strings.Contains(errOut, "nightly") {
		t.Errorf("unknown pipeline trigger: code %d, stderr %q", code, errOut)
	}
	code, _, errOut = run(t, "pipelines", "runs", "nope", "--config", f.path)
	if code != 1 || !strings.Contains(errOut, `"nope"`) || !strings.Contains(errOut, "configured: nightly") {
		t.Errorf("unknown pipeline runs: code %d, stderr %q", code, errOut)
	}

	// A leader's tick starts the first step; the runner gets no pipelines so
	// it only advances runs and cannot fire the schedule by chance.
	cat, subm := f.submitter(t)
	leader, err := controller.NewPipelines(controller.PipelinesOptions{Runs: f.flows, Jobs: f.store, Submitter: subm, Catalog: cat, Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	if err := leader.Tick(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	r, _ = f.flows.GetRun(ctx, r.ID)
	job := r.Steps["build"].JobID
	if r.Steps["build"].State != pipeline.StepRunning || job == "" {
		t.Fatalf("build after a tick: %+v", r.Steps["build"])
	}
	if l, ok := lineWith(runOK(t, "pipelines", "show", r.ID, "--config", f.path), "build", "running", job); !ok {
		t.Errorf("show does not list build's job: %q", l)
	}

	out = runOK(t, "pipelines", "cancel", r.ID, "--config", f.path)
	if !strings.Contains(out, "cancelled") || !strings.Contains(out, "1 running step") || !strings.Contains(out, "1 pending step") {
		t.Errorf("cancel output:\n%s", out)
	}
	r, _ = f.flows.GetRun(ctx, r.ID)
	if r.State != pipeline.RunCancelled || r.Reason != operatorCancelReason {
		t.Fatalf("after cancel: state %s reason %q", r.State, r.Reason)
	}
	if j, err := f.store.Get(ctx, job); err != nil || j.State != jobs.StateCancelled {
		t.Fatalf("build's job after cancel: %s %v", j.State, err)
	}
	testenv.Eventually(t, 5*time.Second, "the run-cancelled event", sawEvent(events.TypePipelineRunCancelled, r.ID))
	if out := runOK(t, "pipelines", "cancel", r.ID, "--config", f.path); !strings.Contains(out, "already ended (cancelled)") {
		t.Errorf("second cancel:\n%s", out)
	}
	if row, _ := lineWith(runOK(t, "pipelines", "--config", f.path), "nightly"); !strings.Contains(row, "cancelled") {
		t.Errorf("LAST RUN does not show the cancelled run: %q", row)
	}
	if code, _, _ := run(t, "pipelines", "show", "no-such-run", "--config", f.path); code != 1 {
		t.Errorf("show of an unknown run: exit %d, want 1", code)
	}
}

// ensureStream creates the event stream of f's config on the NATS server
// srv, as the controller would, for the tests that follow events.
func (f flowEnv) ensureStream(t *testing.T, srv *server.Server) {
	t.Helper()
	js, err := jetstream.New(testenv.NATSConn(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	if err := eventbus.EnsureStream(context.Background(), js, f.cfg.NATS.Stream, subjects(f.cfg), time.Hour); err != nil {
		t.Fatal(err)
	}
}
