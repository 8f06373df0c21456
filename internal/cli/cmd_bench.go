package cli

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/ballastdev/ballast/internal/bench"
)

func runBench(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "bench", "bench [--redis ADDR] [--jobs N] [--producers N] [--slots N] [--samples N]")
	addr := fs.String("redis", "127.0.0.1:6379", "Redis to measure against (a fresh namespace is used and removed)")
	n := fs.Int("jobs", 5000, "jobs per throughput run")
	producers := fs.Int("producers", 8, "concurrent submitters")
	slots := fs.Int("slots", 32, "worker slots")
	samples := fs.Int("samples", 200, "latency samples on an idle worker")
	poll := fs.Duration("poll", 25*time.Millisecond, "worker poll interval (asynq TaskCheckInterval)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run (both phases) to this file")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	res, err := bench.Run(ctx, bench.Options{RedisAddr: *addr, Jobs: *n, Producers: *producers, Slots: *slots,
		LatencySamples: *samples, PollInterval: *poll, Out: e.errOut})
	// An exactly-once violation still has figures worth printing.
	res.Print(e.out)
	return err
}
