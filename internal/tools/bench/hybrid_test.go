package bench_test

import (
	"bytes"
	"context"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/cli"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/internal/tools/bench"
)

// init makes this test binary a `ballast worker` when the Local provider
// starts it as one (its first argument is then "worker", which a test run
// never has), so the hybrid bench's elastic children need no separately
// built binary. It runs before TestMain and exits.
func init() {
	if len(os.Args) < 2 || os.Args[1] != "worker" {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// testBinary is this test binary, which init turns into a worker.
func testBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("os.Executable: %v", err)
	}
	return exe
}

// checkHybrid checks what every hybrid result must satisfy, whatever the
// machine's speed.
func checkHybrid(t *testing.T, res bench.HybridResult, runs int) {
	t.Helper()
	for _, m := range []struct {
		name    string
		l       bench.Latency
		samples int
	}{
		{"reclaim", res.Reclaim, runs},
		{"reclaim decision", res.ReclaimDecision, runs},
		{"reclaim handover", res.ReclaimHandover, runs},
		{"scale-up", res.ScaleUp, runs},
		{"registered", res.Registered, runs},
		{"release", res.Release, runs},
	} {
		if m.l.Samples < m.samples {
			t.Errorf("%s: %d samples, want at least %d", m.name, m.l.Samples, m.samples)
		}
		if m.l.P50 <= 0 || m.l.Max <= 0 {
			t.Errorf("%s: p50 %s, max %s, want both > 0", m.name, m.l.P50, m.l.Max)
		}
	}
	if res.Reclaim.Max >= 5*time.Second {
		t.Errorf("reclaim max %s, want < 5s", res.Reclaim.Max)
	}
	// The launch is requested before the worker it starts can register, in
	// every run, so also in the median and the maximum.
	if res.ScaleUp.P50 >= res.Registered.P50 || res.ScaleUp.Max >= res.Registered.Max {
		t.Errorf("launch requested after %s (max %s) but the elastic worker registered after %s (max %s)",
			res.ScaleUp.P50, res.ScaleUp.Max, res.Registered.P50, res.Registered.Max)
	}
	// A worker is released only after its idle TTL.
	if res.Release.P50 < res.IdleTTL {
		t.Errorf("release p50 %s is shorter than the idle TTL %s", res.Release.P50, res.IdleTTL)
	}
}

// TestRunHybridSmall runs one repetition on a fast tick.
func TestRunHybridSmall(t *testing.T) {
	requireRedis(t)
	var progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	res, err := bench.RunHybrid(ctx, bench.HybridOptions{RedisAddr: testenv.RedisAddr(), Runs: 1, Tick: 200 * time.Millisecond,
		Out: &progress, Binary: testBinary(t)})
	if err != nil {
		t.Fatalf("RunHybrid: %v\nprogress:\n%s", err, progress.String())
	}
	var out bytes.Buffer
	res.Print(&out)
	t.Logf("took %s\n%s\n%s", time.Since(start).Round(time.Millisecond), progress.String(), out.String())
	checkHybrid(t, res, 1)
	if res.Release.Samples < 1 || res.ReleaseBeyondTTL.Samples != res.Release.Samples {
		t.Errorf("release samples %d, beyond-TTL samples %d", res.Release.Samples, res.ReleaseBeyondTTL.Samples)
	}
	for _, want := range []string{"reclaim: core submitted -> core running", "launch requested", "KEDA defaults"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("Print output lacks %q", want)
		}
	}
	if n := leftovers(t, res.Namespace); n != 0 {
		t.Errorf("%d keys of namespace %s left in Redis", n, res.Namespace)
	}
}

// TestRunHybridFull runs the benchmark with its defaults (production tick):
// BALLAST_BENCH_HYBRID=1 go test ./internal/tools/bench -run TestRunHybridFull -v
// (BALLAST_BENCH_HYBRID_RUNS overrides the number of runs).
func TestRunHybridFull(t *testing.T) {
	if os.Getenv("BALLAST_BENCH_HYBRID") != "1" {
		t.Skip("set BALLAST_BENCH_HYBRID=1 to run the full hybrid benchmark")
	}
	requireRedis(t)
	runs := bench.DefaultHybridRuns
	if s := os.Getenv("BALLAST_BENCH_HYBRID_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("BALLAST_BENCH_HYBRID_RUNS=%q: %v", s, err)
		}
		runs = n
	}
	var progress bytes.Buffer
	res, err := bench.RunHybrid(context.Background(), bench.HybridOptions{RedisAddr: testenv.RedisAddr(), Runs: runs,
		Out: &progress, Binary: testBinary(t)})
	if err != nil {
		t.Fatalf("RunHybrid: %v\nprogress:\n%s", err, progress.String())
	}
	var out bytes.Buffer
	res.Print(&out)
	t.Logf("\n%s\n%s", progress.String(), out.String())
	checkHybrid(t, res, runs)
}
