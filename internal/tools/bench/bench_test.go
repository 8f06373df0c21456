package bench_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/internal/tools/bench"
	"github.com/ballastdev/ballast/queues"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// requireRedis skips or fails (per testenv.Unavailable) without a Redis.
func requireRedis(t *testing.T) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr()})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		testenv.Unavailable(t, "Redis at "+testenv.RedisAddr(), err)
	}
}

// leftovers counts keys of a namespace still in Redis.
func leftovers(t *testing.T, ns string) int {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr()})
	defer c.Close()
	ctx := context.Background()
	n := 0
	for _, pattern := range queues.NewNamespace(ns).KeyPatterns() {
		keys, err := c.Keys(ctx, pattern).Result()
		if err != nil {
			t.Fatal(err)
		}
		n += len(keys)
	}
	names, _ := c.SMembers(ctx, "asynq:queues").Result()
	for _, q := range names {
		if strings.HasPrefix(q, ns+".") {
			n++
		}
	}
	return n
}

// requireNATS skips or fails (per testenv.Unavailable) without the NATS
// server of the submission phase.
func requireNATS(t *testing.T) {
	t.Helper()
	nc, err := nats.Connect(bench.DefaultNATSURL, nats.Timeout(2*time.Second))
	if err != nil {
		testenv.Unavailable(t, "NATS at "+bench.DefaultNATSURL, err)
	}
	nc.Close()
}

func TestRunSmall(t *testing.T) {
	requireRedis(t)
	requireNATS(t)
	var progress bytes.Buffer
	res, err := bench.Run(context.Background(), bench.Options{RedisAddr: testenv.RedisAddr(),
		Jobs: 300, LatencySamples: 20, SubmissionJobs: 200, Out: &progress})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, progress.String())
	}
	var table bytes.Buffer
	res.Print(&table)
	t.Logf("\n%s", table.String())

	if res.Raw.Count != 300 || res.RawDrain.Count != 300 || res.Ballast.Count != 300 {
		t.Errorf("counts raw %d, draining %d, ballast %d, want 300 each over the rounds", res.Raw.Count, res.RawDrain.Count, res.Ballast.Count)
	}
	if len(res.RoundRatios) != bench.DefaultRounds || slices.Contains(res.RoundRatios, 0) || !strings.Contains(table.String(), "ratio per round") {
		t.Errorf("round ratios %v, want %d, none zero, in the table", res.RoundRatios, bench.DefaultRounds)
	}
	if res.Raw.PerSecond <= 0 || res.Ballast.PerSecond <= 0 || res.Ratio <= 0 {
		t.Errorf("throughputs raw %.1f/s, ballast %.1f/s, ratio %.2f: want all > 0", res.Raw.PerSecond, res.Ballast.PerSecond, res.Ratio)
	}
	for name, l := range map[string]bench.Latency{"raw": res.RawLatency, "ballast": res.BallastLatency} {
		if l.Samples != 20 || l.P50 <= 0 || l.P50 > l.P90 || l.P90 > l.P99 || l.P99 > l.Max {
			t.Errorf("%s latency not ordered or missing: %+v", name, l)
		}
	}
	if !res.ExactlyOnce.OK() || res.ExactlyOnce.Checked != 320 {
		t.Errorf("exactly-once: checked %d (want 320), violations %+v", res.ExactlyOnce.Checked, res.ExactlyOnce.Violations)
	}
	if !strings.Contains(table.String(), "exactly-once: ok") {
		t.Errorf("table does not report exactly-once")
	}
	if n := leftovers(t, res.Namespace); n != 0 {
		t.Errorf("%d keys of namespace %s left in Redis", n, res.Namespace)
	}

	s := res.Submission
	if s.Single.Count != 200 || s.Batch.Count != 200 || s.BatchSize != 10000 {
		t.Errorf("submission counts single %d, batch %d (batches of %d), want 200 each in batches of 10000", s.Single.Count, s.Batch.Count, s.BatchSize)
	}
	if s.Single.PerSecond <= 0 || s.Batch.PerSecond <= 0 || s.Ratio <= 0 {
		t.Errorf("submission single %.1f/s, batch %.1f/s, ratio %.2f: want all > 0", s.Single.PerSecond, s.Batch.PerSecond, s.Ratio)
	}
	if s.Recorded != 400 || s.Tasks != 400 {
		t.Errorf("submission left %d records and %d tasks, want 400 each (every job recorded once)", s.Recorded, s.Tasks)
	}
	if !strings.Contains(table.String(), "ratio batch / single") || !strings.Contains(table.String(), "each job once") {
		t.Errorf("table does not show the submission phase")
	}
	if n := leftovers(t, s.Namespace); n != 0 {
		t.Errorf("%d keys of the submission namespace %s left in Redis", n, s.Namespace)
	}
}

// TestRunFull prints the full-size figures when BALLAST_BENCH_FULL is set;
// it is too slow and too noisy for every test run.
func TestRunFull(t *testing.T) {
	if os.Getenv("BALLAST_BENCH_FULL") == "" {
		t.Skip("set BALLAST_BENCH_FULL=1 to run the full-size bench")
	}
	requireRedis(t)
	res, err := bench.Run(context.Background(), bench.Options{RedisAddr: testenv.RedisAddr(), Out: os.Stderr})
	res.Print(os.Stdout)
	if err != nil {
		t.Fatal(err)
	}
}

func TestOptions(t *testing.T) {
	o := bench.Options{}.WithDefaults()
	if o.RedisAddr != bench.DefaultRedisAddr || o.Jobs != bench.DefaultJobs || bench.DefaultJobs != 20000 || o.Rounds != 4 || o.Producers != 8 || o.Slots != 32 ||
		o.PollInterval != 25*time.Millisecond || o.LatencySamples != 200 || o.Out == nil {
		t.Fatalf("defaults: %+v", o)
	}
	if err := o.Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
	bad := bench.Options{Jobs: -1, Rounds: 101, Producers: 2000, Slots: 5000, PollInterval: time.Microsecond, LatencySamples: -3, SubmissionJobs: -1}
	err := bad.Validate()
	for _, field := range []string{"redis_addr", "jobs", "rounds", "producers", "slots", "poll_interval", "latency_samples", "submission_jobs"} {
		if err == nil || !strings.Contains(err.Error(), field+":") {
			t.Errorf("Validate does not name %s: %v", field, err)
		}
	}
	if _, err := bench.Run(context.Background(), bad); err == nil {
		t.Error("Run accepted invalid options")
	}
}

func TestPrintShoutsViolations(t *testing.T) {
	res := bench.Result{ExactlyOnce: bench.ExactlyOnce{Checked: 3, Violations: []bench.Violation{
		{JobID: "j1", Runs: 2, State: "succeeded", Attempt: 1, Problem: "ran 2 times"}}}}
	var b bytes.Buffer
	res.Print(&b)
	if !strings.Contains(b.String(), "EXACTLY-ONCE VIOLATED: 1 of 3") || !strings.Contains(b.String(), "j1: ran 2 times") {
		t.Fatalf("violation not printed loudly:\n%s", b.String())
	}
	if err := res.ExactlyOnce.Err(); !errors.Is(err, bench.ErrExactlyOnce) {
		t.Fatalf("Err() = %v, want ErrExactlyOnce", err)
	}
}
