package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// runExampleJob is a checkpointing job that counts steps. It resumes from
// BALLAST_RESUME_FROM ("step=N"), prints a checkpoint line every
// --checkpoint-every steps and on SIGTERM, and appends each completed step
// to --record so tests can prove no step is lost or done twice beyond the
// last checkpoint.
func runExampleJob(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "example-job", "example-job [--steps N] [--step-time D] [--checkpoint-every K] [--record FILE]")
	steps := fs.Int("steps", 20, "steps to count")
	stepTime := fs.Duration("step-time", 500*time.Millisecond, "time one step takes")
	every := fs.Int("checkpoint-every", 1, "checkpoint after every K steps")
	record := fs.String("record", "", "append \"ATTEMPT STEP\" per completed step to this file")
	fail := fs.Int("fail-at", 0, "exit 1 when reaching this step on attempt 1 (to show retries)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *steps < 0 || *every < 1 || *stepTime < 0 {
		return usageError{"--steps and --step-time must not be negative; --checkpoint-every must be at least 1"}
	}
	start := 0
	if r := os.Getenv("BALLAST_RESUME_FROM"); r != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(r, "step="))
		if err != nil {
			return fmt.Errorf("BALLAST_RESUME_FROM=%q is not a checkpoint of this job (want step=N)", r)
		}
		start = n
		fmt.Fprintf(e.out, "resuming after step %d\n", n)
	}
	attempt := os.Getenv("BALLAST_ATTEMPT")
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	defer signal.Stop(term)
	checkpoint := func(n int) { fmt.Fprintf(e.out, "{\"checkpoint\":\"step=%d\"}\n", n) }
	for n := start + 1; n <= *steps; n++ {
		select {
		case <-term:
			checkpoint(n - 1)
			fmt.Fprintf(e.out, "stopping after step %d on SIGTERM\n", n-1)
			return fmt.Errorf("terminated")
		case <-ctx.Done():
			checkpoint(n - 1)
			return ctx.Err()
		case <-time.After(*stepTime):
		}
		if *fail == n && attempt == "1" {
			return fmt.Errorf("failing at step %d as asked (--fail-at)", n)
		}
		if *record != "" {
			f, err := os.OpenFile(*record, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err != nil {
				return err
			}
			fmt.Fprintf(f, "%s %d\n", attempt, n)
			f.Close()
		}
		fmt.Fprintf(e.out, "step %d/%d\n", n, *steps)
		if n%*every == 0 || n == *steps {
			checkpoint(n)
		}
	}
	return nil
}
