package config

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/nats-io/nats.go"
	"gopkg.in/yaml.v3"
)

// exampleEnv is what the example configs name as secrets.
var exampleEnv = map[string]string{
	"BALLAST_REDIS_PASSWORD": "redis-secret",
	"BALLAST_NATS_TOKEN":     "nats-secret",
	"BALLAST_API_TOKEN":      "a-token-of-thirty-two-characters",
}

func setExampleEnv(t *testing.T) {
	for k, v := range exampleEnv {
		t.Setenv(k, v)
	}
}

func TestDevConfigIsValid(t *testing.T) {
	cfg := Dev()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Dev() does not validate: %v", err)
	}
	if got := cfg.Pools["fixed"]; got.Kind != PoolFixed || got.Slots != 4 {
		t.Errorf("fixed pool = %+v, want kind fixed with 4 slots", got)
	}
	for _, name := range []string{"ondemand", "spot"} {
		if !cfg.Pools[name].Kind.Elastic() {
			t.Errorf("pool %s is %q, want an elastic pool", name, cfg.Pools[name].Kind)
		}
	}
	cat, err := cfg.Catalog()
	if err != nil {
		t.Fatalf("Catalog: %v", err)
	}
	if cat.AllowRaw {
		t.Error("dev config allows raw commands")
	}
	// The templates resolve to the commands and classes the dev demo relies on.
	cases := []struct {
		template string
		params   string
		argv     []string
		class    jobs.Class
	}{
		{"hello", `{}`, []string{"sh", "-c", `echo "hello $1"`, "sh", "world"}, jobs.ClassBurst},
		{"sleep", `{"seconds": 1.5}`, []string{"sleep", "1.5"}, jobs.ClassBurst},
		{"steps", `{}`, []string{"@ballast", "example-job", "--steps", "20", "--step-time", "500ms"}, jobs.ClassBurst},
		{"nightly-features", `{"date": "2024-01-02"}`, []string{"sh", "-c", `echo "building features for $1"; sleep 2`, "sh", "2024-01-02"}, jobs.ClassCore},
	}
	for _, c := range cases {
		sub := submission(t, c.template, c.params)
		spec, err := cat.Resolve(sub)
		if err != nil {
			t.Errorf("%s: Resolve: %v", c.template, err)
			continue
		}
		if !reflect.DeepEqual(spec.Command, c.argv) || spec.Class != c.class {
			t.Errorf("%s: argv %q class %s, want %q class %s", c.template, spec.Command, spec.Class, c.argv, c.class)
		}
	}
	steps, _ := cat.Template("steps")
	if !steps.Checkpointable || !steps.Retryable || steps.Grace.Std() != 10*time.Second {
		t.Errorf("steps template = %+v, want checkpointable, retryable, grace 10s", steps)
	}
	if _, err := cat.Resolve(submission(t, "sleep", `{}`)); err == nil {
		t.Error("sleep without seconds resolved; seconds is required")
	}
}

func submission(t *testing.T, template, params string) jobs.Submission {
	t.Helper()
	sub := jobs.Submission{Template: template}
	if err := json.Unmarshal([]byte(params), &sub.Params); err != nil {
		t.Fatalf("params %s: %v", params, err)
	}
	return sub
}

func TestExampleConfigIsValid(t *testing.T) {
	setExampleEnv(t)
	cfg, err := Load(filepath.Join("..", "..", "deploy", "ballast.example.yaml"))
	if err != nil {
		t.Fatalf("deploy/ballast.example.yaml:\n%v", err)
	}
	if len(cfg.Templates) == 0 || len(cfg.Pools) != 3 {
		t.Errorf("example has %d templates and %d pools, want some and 3", len(cfg.Templates), len(cfg.Pools))
	}
	// The example names its secrets by environment variable; without them
	// it is still a valid file (it validates as shipped), and Check warns
	// about each, at its line.
	for k := range exampleEnv {
		t.Setenv(k, "")
	}
	path := filepath.Join("..", "..", "deploy", "ballast.example.yaml")
	_, warnings, err := Check(path, os.Getenv)
	if err != nil {
		t.Fatalf("with secrets unset: %v", err)
	}
	for _, f := range []string{"redis.password_env", "nats.token_env", "http.api_token_env"} {
		if !hasField(warnings, f) {
			t.Errorf("with secrets unset, no warning at %s in:\n%v", f, warnings)
		}
	}
	for _, w := range warnings {
		if w.Line == 0 || !strings.Contains(w.Message, "is not set") {
			t.Errorf("warning without a line or a reason: %v", w)
		}
	}
	setExampleEnv(t)
	if _, warnings, err := Check(path, os.Getenv); err != nil || len(warnings) != 0 {
		t.Errorf("with secrets set: %v %v", warnings, err)
	}
}

func TestKubernetesManifests(t *testing.T) {
	setExampleEnv(t)
	files, err := filepath.Glob(filepath.Join("..", "..", "deploy", "kubernetes", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	kinds := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(strings.NewReader(string(data)))
		for {
			var m struct {
				APIVersion string            `yaml:"apiVersion"`
				Kind       string            `yaml:"kind"`
				Data       map[string]string `yaml:"data"`
				Spec       struct {
					Template struct {
						Spec struct {
							Containers []struct {
								Args []string `yaml:"args"`
							} `yaml:"containers"`
						} `yaml:"spec"`
					} `yaml:"template"`
				} `yaml:"spec"`
			}
			if err := dec.Decode(&m); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("%s: %v", f, err)
				}
				break
			}
			if m.APIVersion == "" || m.Kind == "" {
				t.Errorf("%s: a document without apiVersion or kind", f)
			}
			kinds[m.Kind] = true
			if m.Kind == "ConfigMap" {
				if _, err := Parse([]byte(m.Data["ballast.yaml"]), f); err != nil {
					t.Errorf("the ConfigMap's ballast.yaml does not validate:\n%v", err)
				}
			}
			for _, c := range m.Spec.Template.Spec.Containers {
				if len(c.Args) < 3 || c.Args[1] != "--config" {
					t.Errorf("%s: container args %q, want SUBCOMMAND --config FILE ...", f, c.Args)
				}
			}
		}
	}
	for _, k := range []string{"ConfigMap", "Secret", "Deployment", "StatefulSet"} {
		if !kinds[k] {
			t.Errorf("no %s among the manifests", k)
		}
	}
}

func TestSystemdUnits(t *testing.T) {
	for file, want := range map[string]string{
		"ballast-controller.service": "ballast controller --config /etc/ballast/ballast.yaml",
		"ballast-worker@.service":    "ballast worker --config /etc/ballast/ballast.yaml --pool %i",
	} {
		data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "systemd", file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), want) {
			t.Errorf("%s does not run %q", file, want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	setExampleEnv(t)
	example, err := Load(filepath.Join("..", "..", "deploy", "ballast.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]Config{"dev": Dev(), "example": example} {
		out, err := yaml.Marshal(cfg)
		if err != nil {
			t.Fatalf("%s: marshal: %v", name, err)
		}
		back, err := Parse(out, name+".out.yaml")
		if err != nil {
			t.Fatalf("%s: the marshalled config does not parse:\n%v\n%s", name, err, out)
		}
		if !reflect.DeepEqual(back, cfg) {
			t.Errorf("%s: round trip changed the config:\n got %+v\nwant %+v", name, back, cfg)
		}
	}
}

func TestWithDefaults(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/state")
	orig := Config{
		Namespace: "team-a",
		Pools: map[string]PoolConfig{
			"fixed": {Kind: PoolFixed, Slots: 2},
			"spot":  {Kind: PoolSpot, MaxWorkers: 3},
		},
		Templates: map[string]jobs.Template{"t": {Command: []string{"true"}}},
	}
	before := clone(t, orig)
	got := orig.WithDefaults()

	if !reflect.DeepEqual(orig, before) {
		t.Errorf("WithDefaults changed its receiver:\n got %+v\nwant %+v", orig, before)
	}
	got.Pools["fixed"] = PoolConfig{}
	got.Templates["t"] = jobs.Template{}
	if orig.Pools["fixed"].Slots != 2 || len(orig.Templates["t"].Command) != 1 {
		t.Error("the defaulted copy shares its maps with the receiver")
	}

	got = orig.WithDefaults()
	checks := []struct {
		name      string
		got, want any
	}{
		{"nats.subject_prefix", got.NATS.SubjectPrefix, "team-a"},
		{"nats.stream", got.NATS.Stream, "TEAM_A_EVENTS"},
		{"redis.addr", got.Redis.Addr, DefaultRedisAddr},
		{"worker.poll_interval", got.Worker.PollInterval.Std(), 25 * time.Millisecond},
		{"worker.log_dir", got.Worker.LogDir, filepath.Join("/state", "ballast", "logs")},
		{"worker.checkpoint_dir", got.Worker.CheckpointDir, filepath.Join("/state", "ballast", "checkpoints")},
		{"watermarks.high", got.Watermarks.High, 0.70},
		{"pools.spot.billing", got.Pools["spot"].Billing, BillingPerSecond},
		{"pools.spot.slots_per_worker", got.Pools["spot"].SlotsPerWorker, 1},
		{"pools.fixed.billing", got.Pools["fixed"].Billing, Billing("")},
		{"pools.fixed.region", got.Pools["fixed"].Region, DefaultRegion},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if err := got.Validate(); err != nil {
		t.Errorf("defaulted config does not validate: %v", err)
	}
	// Explicit values are kept.
	orig.Worker.LogDir = "/var/log/b"
	if d := orig.WithDefaults().Worker.LogDir; d != "/var/log/b" {
		t.Errorf("explicit log_dir replaced by %q", d)
	}
}

// clone deep-copies a config through YAML, so the copy shares nothing.
func clone(t *testing.T, c Config) Config {
	t.Helper()
	b, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var out Config
	if err := yaml.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestValidateReportsEveryProblem(t *testing.T) {
	cfg := Config{
		Namespace:  "Bad Name",
		Watermarks: Watermarks{High: 0.3, Low: 0.5},
		Templates:  map[string]jobs.Template{"x": {}},
		Controller: ControllerConfig{CostRetention: jobs.Duration(time.Hour), Tick: jobs.Duration(2 * time.Second),
			RebuildEvery: jobs.Duration(time.Second), LeaderTTL: jobs.Duration(5 * time.Second)},
	}.WithDefaults()
	err := cfg.Validate()
	var ve *jobs.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Validate = %v, want a *jobs.ValidationError", err)
	}
	for _, f := range []string{"namespace", "watermarks.low", "pools", "templates.x.command", "controller.cost_retention",
		"controller.rebuild_every"} {
		if !hasField(err, f) {
			t.Errorf("no problem at %s in %v", f, err)
		}
	}
	// Names derived from the bad namespace do not repeat its problem.
	for _, f := range []string{"nats.stream", "nats.subject_prefix"} {
		if hasField(err, f) {
			t.Errorf("derived field %s reported: %v", f, err)
		}
	}
}

// hasField reports whether err holds a field error at field.
func hasField(err error, field string) bool {
	var ve *jobs.ValidationError
	if errors.As(err, &ve) {
		for _, p := range ve.Problems {
			if p.Field == field {
				return true
			}
		}
	}
	var ps Problems
	if errors.As(err, &ps) {
		for _, p := range ps {
			if p.Field == field {
				return true
			}
		}
	}
	return false
}

// TestInboxPrefix: a wildcard prefix is refused with the field named, and
// a good one reaches nats.go (which would otherwise use _INBOX).
func TestInboxPrefix(t *testing.T) {
	cfg := Config{}.WithDefaults()
	cfg.NATS.InboxPrefix = "_INBOX.>"
	if err := cfg.Validate(); !hasField(err, "nats.inbox_prefix") {
		t.Errorf("inbox_prefix %q accepted: %v", cfg.NATS.InboxPrefix, err)
	}
	cfg.NATS.InboxPrefix = "_INBOX_submitter"
	if err := cfg.Validate(); hasField(err, "nats.inbox_prefix") {
		t.Errorf("inbox_prefix %q refused: %v", cfg.NATS.InboxPrefix, err)
	}
	opts, err := cfg.NATS.Options()
	if err != nil {
		t.Fatal(err)
	}
	var o nats.Options
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			t.Fatal(err)
		}
	}
	if o.InboxPrefix != "_INBOX_submitter" {
		t.Errorf("nats.go inbox prefix %q, want _INBOX_submitter", o.InboxPrefix)
	}
}

// TestStreamReplicas: 1 by default; 3 and 5 pass; any other count is
// refused with the field named.
func TestStreamReplicas(t *testing.T) {
	cfg := Config{}.WithDefaults()
	if cfg.NATS.StreamReplicas != 1 {
		t.Fatalf("default replicas %d, want 1", cfg.NATS.StreamReplicas)
	}
	for _, n := range []int{1, 3, 5} {
		cfg.NATS.StreamReplicas = n
		if err := cfg.Validate(); hasField(err, "nats.stream_replicas") {
			t.Errorf("%d replicas refused: %v", n, err)
		}
	}
	for _, n := range []int{2, 4, 7, -1} {
		cfg.NATS.StreamReplicas = n
		if err := cfg.Validate(); !hasField(err, "nats.stream_replicas") {
			t.Errorf("%d replicas accepted: %v", n, err)
		}
	}
}
