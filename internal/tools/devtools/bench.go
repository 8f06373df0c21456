package devtools

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/ballastdev/ballast/internal/cli"
	"github.com/ballastdev/ballast/internal/tools/bench"
)

func runBench(ctx context.Context, inv *cli.Invocation, args []string) error {
	fs := inv.Flags("bench", "bench [--redis ADDR] [--runs N] [--jobs N] [--rounds N] [--producers N] [--slots N] [--samples N] [--nats URL] [--submit-jobs N] [--no-submission] [--cpuprofile F] [--memprofile F]")
	addr := fs.String("redis", "127.0.0.1:6379", "Redis to measure against (a fresh namespace is used and removed)")
	n := fs.Int("jobs", bench.DefaultJobs, "jobs per throughput run (enough for each run to take seconds, so the figures settle)")
	rounds := fs.Int("rounds", bench.DefaultRounds, "rounds each throughput run is split into, run in turn with the other runs, so that a slow minute of the machine falls on both sides of the ratio")
	runs := fs.Int("runs", 3, "repetitions of the whole measure; the summary gives min, median and max")
	producers := fs.Int("producers", 8, "concurrent submitters")
	slots := fs.Int("slots", 32, "worker slots")
	samples := fs.Int("samples", 200, "latency samples on an idle worker")
	poll := fs.Duration("poll", 25*time.Millisecond, "worker poll interval (asynq TaskCheckInterval)")
	natsURL := fs.String("nats", bench.DefaultNATSURL, "NATS server of the submission phase (single against batch submission through the intake)")
	submitJobs := fs.Int("submit-jobs", 10000, "jobs the submission phase submits each way (batches of up to 10000)")
	noSubmission := fs.Bool("no-submission", false, "skip the submission phase (it needs NATS)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run (every phase) to this file")
	memProfile := fs.String("memprofile", "", "write an allocation profile of the whole run (every phase) to this file, for go tool pprof -sample_index=alloc_space")
	if err := inv.Parse(fs, args); err != nil {
		return err
	}
	// Checked before the profiles' files are made, so a mistake leaves none.
	if *runs < 1 || *runs > 100 {
		return fmt.Errorf("--runs: %d is out of range (1..100)", *runs)
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
	if *memProfile != "" {
		f, err := os.Create(*memProfile)
		if err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
		defer func() {
			// Written last, after a collection: the profile is as of the
			// last one, and holds every allocation of the run only then.
			runtime.GC()
			err := pprof.Lookup("allocs").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				fmt.Fprintf(inv.Stderr(), "--memprofile: %v\n", err)
			}
		}()
	}
	var all []bench.Result
	var firstErr error
	for i := range *runs {
		fmt.Fprintf(inv.Stderr(), "run %d of %d\n", i+1, *runs)
		res, err := bench.Run(ctx, bench.Options{RedisAddr: *addr, Jobs: *n, Rounds: *rounds, Producers: *producers, Slots: *slots,
			LatencySamples: *samples, PollInterval: *poll, NATSURL: *natsURL, SubmissionJobs: *submitJobs,
			NoSubmission: *noSubmission, Out: inv.Stderr()})
		if err != nil && !errors.Is(err, bench.ErrExactlyOnce) {
			return err // no figures to print
		}
		// An exactly-once violation still has figures worth printing.
		all = append(all, res)
		firstErr = cmp.Or(firstErr, err)
	}
	// The last run in full, then every run's headline figures.
	all[len(all)-1].Print(inv.Stdout())
	if len(all) > 1 {
		fmt.Fprintln(inv.Stdout())
		bench.Summarize(all).Print(inv.Stdout())
	}
	return firstErr
}
