package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ballastdev/ballast/internal/tools/chaos"
)

// runChaosRun is `ballast chaos run`: the flags become chaos.Options, the
// harness does the rest, and the exit status says whether the run passed.
func runChaosRun(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "chaos run", "chaos run [--jobs N] [--faults LIST] [--seed N] [-o table|json]")
	var o chaos.Options
	fs.IntVar(&o.Jobs, "jobs", 1000, "jobs to submit")
	fs.IntVar(&o.Clients, "clients", 4, "concurrent submitters")
	fs.IntVar(&o.Workers, "workers", 3, "worker processes")
	fs.IntVar(&o.Slots, "slots", 4, "slots per worker")
	fs.IntVar(&o.Controllers, "controllers", 2, "controller processes")
	fs.DurationVar(&o.MinWork, "min-work", 50*time.Millisecond, "least work a job does before its side effect")
	fs.DurationVar(&o.MaxWork, "max-work", 500*time.Millisecond, "most work a job does before its side effect")
	faults := fs.String("faults", "all", "faults to inject, comma-separated: "+faultNames()+", or all")
	fs.IntVar(&o.WorkerKills, "worker-kills", 3, "plain worker SIGKILLs in the schedule")
	fs.DurationVar(&o.RedisPause, "redis-pause", 3*time.Second, "how long redis-server is frozen (SIGSTOP)")
	fs.DurationVar(&o.NATSOutage, "nats-outage", 3*time.Second, "how long the NATS server is down")
	fs.DurationVar(&o.WorkerPause, "worker-pause", 0, "how long a worker process is frozen (SIGSTOP; default worker-ttl + 2s)")
	fs.DurationVar(&o.Gap, "gap", 2*time.Second, "quiet time between faults")
	fs.DurationVar(&o.WorkerTTL, "worker-ttl", 0, "controller.worker_ttl for the run (default: Ballast's, 4s)")
	fs.DurationVar(&o.LeaderTTL, "leader-ttl", 0, "controller.leader_ttl for the run (default: Ballast's, 5s)")
	seed := fs.Uint64("seed", 1, "seed for job durations, fault order and victims")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "deadline for the whole run")
	fs.StringVar(&o.Dir, "dir", "", "run directory (default: a new temporary one, removed if the run passes)")
	fs.BoolVar(&o.Keep, "keep", false, "keep the temporary run directory even when the run passes")
	out := fs.String("output", "table", "output format: table or json")
	fs.StringVar(out, "o", "table", "shorthand for --output")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageError{"chaos run takes no arguments, only flags"}
	}
	// Zero means "the default" to chaos.Options; on the command line it is
	// a mistake to name.
	if o.Jobs < 1 || o.Clients < 1 || o.Workers < 1 || o.Slots < 1 || o.Controllers < 1 {
		return usageError{fmt.Sprintf("--jobs, --clients, --workers, --slots and --controllers must be at least 1 (jobs: %d)", o.Jobs)}
	}
	var err error
	if o.Faults, err = chaos.ParseFaults(*faults); err != nil {
		return usageError{"--faults: " + err.Error()}
	}
	o.Seed = *seed
	if o.Seed == 0 {
		return usageError{"--seed must not be 0"}
	}
	check := o.WithDefaults()
	check.Binary = "ballast" // found below; the flags are checked first
	if err := check.Validate(); err != nil {
		return usageError{strings.ReplaceAll(err.Error(), "\n", "; ")}
	}
	// The controllers and workers are this very binary. A test binary
	// would run its tests instead of `controller`, and a test that reached
	// this point would start runs recursively: refuse it.
	if o.Binary, err = os.Executable(); err != nil {
		return fmt.Errorf("chaos run: finding this binary: %w", err)
	}
	if strings.HasSuffix(o.Binary, ".test") {
		return fmt.Errorf("chaos run re-executes its own binary, and %s is a test binary: build cmd/ballast and run that", o.Binary)
	}
	o.Progress = e.errOut
	rep, err := chaos.Run(ctx, o)
	if rep != nil {
		if *out == "json" {
			if werr := writeJSON(e.out, rep); werr != nil {
				return werr
			}
		} else if werr := rep.WriteTable(e.out); werr != nil {
			return werr
		}
	}
	switch {
	case err != nil:
		return err
	case !rep.OK():
		return errors.New("chaos run failed: " + strings.Join(rep.Problems, "; "))
	}
	return nil
}

// faultNames lists the fault kinds for the flag's help.
func faultNames() string {
	names := make([]string, len(chaos.AllFaults))
	for i, f := range chaos.AllFaults {
		names[i] = string(f)
	}
	return strings.Join(names, ",")
}
