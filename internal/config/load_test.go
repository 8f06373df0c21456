package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// marker tags the line a test expects a problem on.
const marker = "# <-"

// wantLine returns the 1-based line of doc that carries the marker.
func wantLine(t *testing.T, doc string) int {
	t.Helper()
	for i, l := range strings.Split(doc, "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	t.Fatalf("no %q marker in:\n%s", marker, doc)
	return 0
}

const fixedPool = `
pools:
  fixed: {kind: fixed, slots: 2}
`

func TestParseReportsFieldAndLine(t *testing.T) {
	t.Setenv("BALLAST_TEST_UNSET", "")
	t.Setenv("TEST_REDIS_SECRET", "s3cret")
	t.Setenv("TEST_NATS_SECRET", "s3cret")
	cases := []struct {
		name  string
		doc   string
		field string
		msg   string // a fragment the message must contain
	}{
		{"bad namespace", "namespace: Ballast_Prod # <-\n" + fixedPool,
			"namespace", "lower-case"},
		{"region that cannot name a queue", `
pools:
  fixed: {kind: fixed, slots: 2}
  spot:
    kind: spot
    region: EU West # <-
`, "pools.spot.region", "a-z, 0-9 and '-'"},
		{"unknown billing", `
pools:
  spot:
    kind: spot
    billing: per_fortnight # <-
`, "pools.spot.billing", "per_second, per_minute or per_hour"},
		{"fixed pool without slots points at the pool", `
pools:
  ondemand: {kind: ondemand}
  fixed: # <-
    kind: fixed
    price_per_slot_hour: 1
`, "pools.fixed.slots", "slots > 0"},
		{"negative price", `
pools:
  ondemand:
    kind: ondemand
    price_per_slot_hour: -2.5 # <-
`, "pools.ondemand.price_per_slot_hour", "0 or more"},
		{"slots per worker", `
pools:
  spot: {kind: spot, slots_per_worker: -1} # <-
`, "pools.spot.slots_per_worker", "at least 1"},
		{"second fixed pool", `
pools:
  a: {kind: fixed, slots: 1}
  b:
    kind: fixed # <-
    slots: 1
`, "pools.b.kind", "give each flavor labels of its own"},
		{"unknown pool kind", `
pools:
  x:
    kind: reserved # <-
`, "pools.x.kind", "fixed, ondemand or spot"},
		{"elastic option on fixed pool", `
pools:
  fixed:
    kind: fixed
    slots: 3
    billing: per_hour # <-
`, "pools.fixed.billing", "elastic pools"},
		{"no pools", "namespace: ok # <-\n", "pools", "at least one pool"},
		{"watermarks inverted", fixedPool + `
watermarks:
  high: 0.5
  low: 0.6 # <-
`, "watermarks.low", "not below"},
		{"watermark above one", fixedPool + `
watermarks:
  high: 1.5 # <-
`, "watermarks.high", "between 0"},
		{"redis addr without port", `
redis:
  addr: localhost # <-
` + fixedPool, "redis.addr", "host:port"},
		{"unknown redis mode", `
redis:
  mode: replicated # <-
` + fixedPool, "redis.mode", "standalone, sentinel, cluster"},
		{"cluster without seeds", `
redis: # <-
  mode: cluster
` + fixedPool, "redis.addrs", "seed nodes"},
		{"cluster seed without port", `
redis:
  mode: cluster
  addrs:
    - 10.0.0.1:6379
    - 10.0.0.2 # <-
` + fixedPool, "redis.addrs[1]", "host:port"},
		{"cluster with a db", `
redis:
  mode: cluster
  addrs: [10.0.0.1:6379]
  db: 2 # <-
` + fixedPool, "redis.db", "only database 0"},
		{"cluster with addr as well", `
redis:
  mode: cluster
  addr: 10.0.0.1:6379 # <-
  addrs: [10.0.0.1:6379]
` + fixedPool, "redis.addr", "dials redis.addrs"},
		{"sentinel without master name", `
redis: # <-
  mode: sentinel
  addrs: [10.0.0.1:26379]
` + fixedPool, "redis.master_name", "sentinel monitor"},
		{"negative replicas", `
redis:
  wait_replicas: -1 # <-
` + fixedPool, "redis.wait_replicas", "must not be negative"},
		{"replica wait too long", `
redis:
  wait_replicas: 1
  wait_timeout: 5s # <-
` + fixedPool, "redis.wait_timeout", "between 1ms"},
		{"replica wait under a millisecond", `
redis:
  wait_replicas: 1
  wait_timeout: 500us # <-
` + fixedPool, "redis.wait_timeout", "between 1ms"},
		{"replica wait without replicas", `
redis:
  wait_timeout: 1s # <-
` + fixedPool, "redis.wait_timeout", "set both or neither"},
		{"standalone with addrs", `
redis:
  addrs: [10.0.0.1:6379] # <-
` + fixedPool, "redis.addrs", "redis.addr"},
		{"two redis passwords", `
redis:
  password: hunter2 # <-
  password_env: HOME
` + fixedPool, "redis.password", "keep only one"},
		{"env var name that cannot be one", `
redis:
  password_env: 1BAD # <-
` + fixedPool, "redis.password_env", "not an environment variable name"},
		{"API beyond loopback without token", fixedPool + `
http: # <-
  listen: 0.0.0.0:8480
`, "http.api_token", "set api_token_env"},
		{"short API token", `
http:
  listen: 127.0.0.1:8480
  api_token: short # <-
` + fixedPool, "http.api_token", "at least 16"},
		{"two NATS auth methods", `
nats:
  user: ballast
  password: secret
  token: tok # <-
` + fixedPool, "nats.token", "one way to authenticate"},
		{"NATS URL scheme", `
nats:
  url: http://127.0.0.1:4222 # <-
` + fixedPool, "nats.url", "nats, tls, ws or wss"},
		{"client cert without key points at tls", `
redis:
  addr: 127.0.0.1:6379
  tls: # <-
    enabled: true
    cert_file: /etc/ballast/client.pem
` + fixedPool, "redis.tls.key_file", "both cert_file and key_file"},
		{"TLS file with TLS off", `
nats:
  tls:
    ca_file: /etc/ca.pem # <-
` + fixedPool, "nats.tls.ca_file", "TLS is off"},
		{"worker ttl under two heartbeats", `
controller:
  worker_ttl: 1s # <-
worker:
  heartbeat: 1s
` + fixedPool, "controller.worker_ttl", "two worker heartbeats"},
		{"self-fence share over the maximum", `
worker:
  self_fence: 0.95 # <-
` + fixedPool, "worker.self_fence", "at most 0.9"},
		{"self-fence within one heartbeat", `
controller:
  worker_ttl: 2s
worker:
  heartbeat: 1s
  self_fence: 0.4 # <-
` + fixedPool, "worker.self_fence", "not more than one worker heartbeat"},
		{"job log lines", `
worker:
  job_log_lines: -1 # <-
` + fixedPool, "worker.job_log_lines", "between 1 and"},
		{"template placeholder in a block list", fixedPool + `
templates:
  hello:
    command:
      - echo
      - ${nme} # <-
    params:
      name: {type: string}
`, "templates.hello.command[1]", "${nme} names no declared parameter"},
		{"required parameter with default", fixedPool + `
templates:
  sleep:
    command: [sleep, "${s}"]
    params:
      s:
        type: float
        required: true
        default: 3 # <-
`, "templates.sleep.params.s.default", "drop one of them"},
		{"template name with dots, missing command", fixedPool + `
templates:
  v1.2: # <-
    description: no command
`, "templates.v1.2.command", "missing"},
		{"pass_env of the Redis password", fixedPool + `
redis:
  password_env: TEST_REDIS_SECRET
templates:
  leak:
    command: [env]
    pass_env:
      - LD_LIBRARY_PATH
      - TEST_REDIS_SECRET # <-
`, "templates.leak.pass_env[1]", "holds a worker credential (redis.password_env)"},
		{"pass_env of the NATS token", fixedPool + `
nats:
  token_env: TEST_NATS_SECRET
templates:
  leak:
    command: [env]
    pass_env: [TEST_NATS_SECRET] # <-
`, "templates.leak.pass_env[0]", "holds a worker credential (nats.token_env)"},
		{"pass_env of the API token", fixedPool + `
templates:
  leak:
    command: [env]
    pass_env: [BALLAST_API_TOKEN] # <-
`, "templates.leak.pass_env[0]", "reserved"},
		{"env sets a contract variable", fixedPool + `
templates:
  fake:
    command: [env]
    env:
      BALLAST_JOB_ID: x # <-
`, "templates.fake.env.BALLAST_JOB_ID", "reserved"},
		{"env picks the GPUs", fixedPool + `
templates:
  train:
    command: [python, train.py]
    env:
      CUDA_VISIBLE_DEVICES: "0,1" # <-
`, "templates.train.env.CUDA_VISIBLE_DEVICES", "reserved: a GPU worker sets it to the GPUs granted to the attempt"},
		{"env name that is no name", fixedPool + `
templates:
  bad:
    command: [env]
    env:
      "A-B": x # <-
`, "templates.bad.env.A-B", "not an environment variable name"},
		{"pass_env twice", fixedPool + `
templates:
  twice:
    command: [env]
    pass_env:
      - CUDA_HOME
      - CUDA_HOME # <-
`, "templates.twice.pass_env[1]", "listed twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.doc), "b.yaml")
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("Parse = %v, want Problems", err)
			}
			if len(ps) != 1 {
				t.Fatalf("%d problems, want 1:\n%v", len(ps), err)
			}
			p := ps[0]
			if p.Field != c.field {
				t.Errorf("field %q, want %q (%v)", p.Field, c.field, p)
			}
			if line := wantLine(t, c.doc); p.Line != line {
				t.Errorf("line %d, want %d (%v)", p.Line, line, p)
			}
			if !strings.Contains(p.Message, c.msg) {
				t.Errorf("message %q does not contain %q", p.Message, c.msg)
			}
			var fe *jobs.FieldError
			if !errors.As(err, &fe) || fe.Field != c.field {
				t.Errorf("errors.As(*jobs.FieldError) = %v, want field %s", fe, c.field)
			}
			prefix := "b.yaml:" + strconv.Itoa(p.Line) + ":" + strconv.Itoa(p.Column) + ": " + c.field + ": "
			if !strings.HasPrefix(p.Error(), prefix) {
				t.Errorf("Error() = %q, want prefix %q", p.Error(), prefix)
			}
		})
	}
}

// TestParseDecodeErrors covers problems found before validation: unknown
// keys, wrong types, refused durations, syntax, document shape. Each case
// expects exactly these problems, in file order.
func TestParseDecodeErrors(t *testing.T) {
	type want struct {
		line  int
		field string
		msg   string
	}
	cases := []struct {
		name string
		doc  string
		want []want
	}{
		{"misspelt key with suggestion", "redis:\n  addr: 127.0.0.1:6379\n  pasword: x\n",
			[]want{{3, "redis.pasword", `did you mean "password"`}}},
		{"unknown top-level key lists known ones", "queues: 3\n",
			[]want{{1, "queues", "known here: allow_raw_commands, capacity, chargeback, checkpoints, controller"}}},
		{"unknown key in a pool", "pools:\n  spot:\n    kind: spot\n    max_worker: 3\n",
			[]want{{4, "pools.spot.max_worker", `did you mean "max_workers"`}}},
		{"unknown key in a template parameter", "templates:\n  t:\n    command: [x]\n    params:\n      p: {type: int, maximum: 3}\n",
			[]want{{5, "templates.t.params.p.maximum", "unknown field"}}},
		{"wrong type", "pools:\n  fixed: {kind: fixed, slots: four}\n",
			[]want{{2, "pools.fixed.slots", "cannot unmarshal !!str `four` into int"}}},
		{"list where a number goes", "redis:\n  db: [1, 2]\n",
			[]want{{2, "redis.db", "cannot unmarshal !!seq into int"}}},
		{"bad durations, all of them", "controller:\n  tick: 1\nworker:\n  heartbeat: soon\ntemplates:\n  t: {command: [x], grace: 1 minute}\n",
			[]want{
				{2, "controller.tick", `"1" is not a duration`},
				{4, "worker.heartbeat", `"soon" is not a duration`},
				{6, "templates.t.grace", `"1 minute" is not a duration`},
			}},
		{"all decode problems in one round", "redis:\n  dial_timeout: 2\n  addr: 1\n  bogus: 1\npools:\n  fixed: {kind: fixed, slots: x}\n",
			[]want{
				{2, "redis.dial_timeout", "not a duration"},
				{4, "redis.bogus", "unknown field"},
				{6, "pools.fixed.slots", "cannot unmarshal"},
			}},
		{"duplicate key", "namespace: a\nnamespace: b\n",
			[]want{{2, "", `mapping key "namespace" already defined at line 1`}}},
		{"syntax error", "redis:\n  addr: \"unterminated\n",
			[]want{{2, "", "found unexpected end of stream"}}},
		{"second document", "namespace: a\n---\nnamespace: b\n",
			[]want{{2, "", "second YAML document"}}},
		{"not a mapping", "- redis\n- nats\n",
			[]want{{1, "", "must be a mapping"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.doc), "d.yaml")
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("Parse = %v, want Problems", err)
			}
			if len(ps) != len(c.want) {
				t.Fatalf("%d problems, want %d:\n%v", len(ps), len(c.want), err)
			}
			for i, w := range c.want {
				p := ps[i]
				if p.Line != w.line || p.Field != w.field || !strings.Contains(p.Message, w.msg) {
					t.Errorf("problem %d = %q (line %d, field %q), want line %d, field %q, message with %q",
						i, p.Error(), p.Line, p.Field, w.line, w.field, w.msg)
				}
				if !strings.HasPrefix(p.Error(), "d.yaml:"+strconv.Itoa(w.line)+":") {
					t.Errorf("Error() = %q, want it to start with d.yaml:%d:", p.Error(), w.line)
				}
			}
		})
	}
}

func TestProblemsPrintOnePerLineInFileOrder(t *testing.T) {
	doc := `namespace: ok
pools:
  fixed: {kind: fixed, slots: 0}
redis:
  addr: nowhere
watermarks: {high: 2}
`
	_, err := Parse([]byte(doc), "p.yaml")
	if err == nil {
		t.Fatal("Parse accepted a bad config")
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{"p.yaml:3:", "p.yaml:5:", "p.yaml:6:"}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want prefix %q", i, lines[i], w)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ballast.yaml")
	doc := "namespace: prod\npools:\n  fixed: {kind: fixed, slots: 8}\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Namespace != "prod" || cfg.Pools["fixed"].Slots != 8 || cfg.NATS.Stream != "PROD_EVENTS" {
		t.Errorf("Load = %+v, want namespace prod, 8 fixed slots, stream PROD_EVENTS", cfg)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("pools:\n  fixed: {kind: fixed}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(bad)
	if err == nil || !strings.HasPrefix(err.Error(), bad+":2:") {
		t.Errorf("Load(bad) = %v, want a problem at %s:2", err, bad)
	}

	_, err = Load(filepath.Join(dir, "missing.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want an error matching os.ErrNotExist", err)
	}
}

func TestEmptyFileGetsDefaultsButNeedsPools(t *testing.T) {
	_, err := Parse(nil, "empty.yaml")
	if !hasField(err, "pools") {
		t.Fatalf("Parse(empty) = %v, want a problem at pools", err)
	}
	cfg, err := Parse([]byte("pools: {fixed: {kind: fixed, slots: 1}}\n"), "min.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Redis.Addr != DefaultRedisAddr || cfg.HTTP.Listen != DefaultListen || cfg.Worker.PollInterval.Std() != DefaultPollInterval {
		t.Errorf("minimal config not defaulted: %+v", cfg)
	}
}

// TestParseManyAliases guards against a document whose aliases multiply:
// a thousand templates sharing one template of a thousand parameters sharing
// one parameter of a thousand values is a billion nodes if every alias is
// followed. It must be refused quickly, not walked node by node.
func TestParseManyAliases(t *testing.T) {
	const n = 1000
	list := func(first string, rest string) string {
		items := make([]string, n)
		items[0] = first
		for i := 1; i < n; i++ {
			items[i] = rest
		}
		return strings.Join(items, ", ")
	}
	var b strings.Builder
	b.WriteString("templates:\n  t0: &t\n    command: [x]\n    params:\n")
	fmt.Fprintf(&b, "      p0: &p {type: enum, values: [%s]}\n", list("a", "a"))
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "      p%d: *p\n", i)
	}
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  t%d: *t\n", i)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Parse([]byte(b.String()), "lol.yaml")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Parse accepted a document of a billion nodes")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Parse did not finish within 20s on a document of nested aliases")
	}
}

// A template's size is written inline: slots, replicas, cpus, memory and
// requires are template keys, checked like the others.
func TestTemplateSizeKeysAreKnown(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ballast.yaml")
	src := "pools: {fixed: {kind: fixed, slots: 4}}\ntemplates:\n  train:\n    command: [train]\n    slots: 4\n    max_slots: 8\n    cpus: 8\n    memory: 32GiB\n    requires: {gpu_model: A100}\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatalf("a template with a size does not load: %v", err)
	}
	if tpl := cfg.Templates["train"]; tpl.Slots != 4 || tpl.MaxSlots != 8 || tpl.Requires["gpu_model"] != "A100" {
		t.Errorf("loaded %+v", tpl.Size)
	}
	// A template may accept several models: any of them meets it.
	src = "pools: {fixed: {kind: fixed, slots: 4, labels: {gpu_model: V100M32}}}\ntemplates:\n  train:\n    command: [train]\n    requires: {gpu_model: [V100M16, V100M32]}\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, err = Load(path); err != nil {
		t.Fatalf("a template accepting two models does not load: %v", err)
	}
	if got := cfg.Templates["train"].Requires["gpu_model"]; got != "V100M16|V100M32" {
		t.Errorf("requires a list: read %q", got)
	}
	if err := os.WriteFile(path, []byte("pools: {fixed: {kind: fixed, slots: 4}}\ntemplates:\n  train:\n    command: [train]\n    slotz: 4\n"), 0o600); err == nil {
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), `did you mean "slots"`) {
			t.Errorf("a misspelt size key: %v", err)
		}
	}
}

// An elastic pool may declare what its workers offer; a fixed pool may not.
func TestPoolCPUsAndMemoryPerWorker(t *testing.T) {
	cfg, err := Parse([]byte("pools:\n  fixed: {kind: fixed, slots: 4}\n  od: {kind: ondemand, max_workers: 4, slots_per_worker: 8, cpus_per_worker: 96, memory_per_worker: 1TiB}\n"), "x.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range cfg.PolicyPools() {
		if p.Name == "od" && (p.CPUs != 96 || p.Memory != 1<<40) {
			t.Errorf("od offers %v CPUs and %d bytes", p.CPUs, p.Memory)
		}
	}
	_, err = Parse([]byte("pools:\n  fixed: {kind: fixed, slots: 4, cpus_per_worker: 8}\n"), "x.yaml")
	if err == nil || !strings.Contains(err.Error(), "pools.fixed.cpus_per_worker") {
		t.Errorf("cpus_per_worker on a fixed pool: %v", err)
	}
	_, err = Parse([]byte("pools:\n  od: {kind: ondemand, max_workers: 4, slots_per_worker: 8, cpus_per_worker: -1}\n"), "x.yaml")
	if err == nil || !strings.Contains(err.Error(), "pools.od.cpus_per_worker") {
		t.Errorf("negative cpus_per_worker: %v", err)
	}
}

// Fixed pools with labels of their own are flavors, each with its quota.
func TestFixedPoolsPerFlavor(t *testing.T) {
	cfg, err := Parse([]byte("pools:\n  a100: {kind: fixed, slots: 8, labels: {gpu_model: A100}}\n  t4: {kind: fixed, slots: 4, labels: {gpu_model: T4}}\n"), "flavors.yaml")
	if err != nil {
		t.Fatalf("two flavors do not load: %v", err)
	}
	if q := cfg.FixedQuota(); len(q) != 2 || q["a100"] != 8 || q["t4"] != 4 {
		t.Errorf("quotas %v", q)
	}
}

// A pool's labels reach the policy, and a bad one is refused by name.
func TestPoolLabels(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ballast.yaml")
	write := func(src string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("pools:\n  fixed: {kind: fixed, slots: 8, labels: {gpu_model: H100}}\n")
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if ps := cfg.PolicyPools(); len(ps) != 1 || ps[0].Labels["gpu_model"] != "H100" {
		t.Errorf("policy pools %+v", ps)
	}
	write("pools:\n  fixed: {kind: fixed, slots: 8, labels: {\"gpu model\": H100}}\n")
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "pools.fixed.labels.gpu model") {
		t.Errorf("a bad label key: %v", err)
	}
}
