package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math"

	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/workers/gpu"
	"github.com/ballastdev/ballast/workers/isolation"
)

func runWorker(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "worker", "worker [--config FILE] --pool NAME [--slots N] [--gpus auto|0,1,...|GPU-UUID,...] [--gpu-mps] [--cpus N] [--memory SIZE] [--isolation auto|v2|v1|off]")
	cfgPath := configFlag(fs)
	pool := fs.String("pool", "fixed", "pool this worker serves")
	slots := fs.Int("slots", 0, "jobs run at once (default: the number of GPUs with --gpus, else the pool's slots, or slots_per_worker for elastic pools)")
	gpus := fs.String("gpus", "", "make this a GPU worker, a slot per GPU, each job bound to GPUs of its own: auto (every GPU nvidia-smi lists), indices (0,1,2,3) or UUIDs (GPU-...,GPU-...); needs nvidia-smi")
	mps := fs.Bool("gpu-mps", false, "with --gpus, tell each job that shares a GPU (gpu_share) its part of the GPU through CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, for machines that run NVIDIA's MPS control daemon")
	cpus := fs.Float64("cpus", 0, "CPUs sized jobs that ask for cpus may take of this worker (default: the machine's)")
	memory := fs.String("memory", "", "memory sized jobs that ask for memory may take, like 48GiB (default: the machine's)")
	id := fs.String("id", "", "registry ID (default host-pid-random; elastic providers pass their instance ID)")
	iso := fs.String("isolation", "auto", "how QoS groups are enforced: auto (cgroup v2 if its controllers are there, else v1, else none), v2, v1 or off")
	if err := parse(fs, args); err != nil {
		return err
	}
	mode, err := isolation.ParseMode(*iso)
	if err != nil {
		return usageError{"--" + err.Error()}
	}
	if *slots < 0 {
		return usageError{"--slots must not be negative"}
	}
	if *cpus < 0 || math.IsNaN(*cpus) || math.IsInf(*cpus, 0) {
		return usageError{"--cpus must be a number of CPUs, 0 or more (0: the machine's)"}
	}
	var mem jobs.ByteSize
	if *memory != "" {
		if mem, err = jobs.ParseByteSize(*memory); err != nil {
			return usageError{"--memory: " + err.Error()}
		}
	}
	devs, err := selectGPUs(ctx, fs, *gpus, *slots)
	if err != nil {
		return err
	}
	if *mps && len(devs) == 0 {
		return usageError{"--gpu-mps needs --gpus: only a GPU worker runs jobs that share a GPU"}
	}
	if err := guardProcess(); err != nil {
		return err
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(e.errOut, nil))
	rdb, err := connectRedis(ctx, cfg)
	if err != nil {
		return err
	}
	defer rdb.Close()
	// Events are worth having but not worth refusing to work for.
	var pub events.Publisher = events.Discard
	nc, err := connectNATSLogged(cfg, "ballast-worker", log)
	if err != nil {
		log.Warn("running without events and control wake-ups (preemption waits for the heartbeat)", "err", err)
		nc = nil
	} else {
		defer nc.Close()
		pub = eventbus.NewNATSPublisher(nc, subjects(cfg))
	}
	var st stack
	defer func() { st.stop() }() // a closure: st grows after this line
	if err := startTracing(ctx, "ballast-worker", &st); err != nil {
		return err
	}
	w, err := startWorker(ctx, cfg, newStore(rdb, cfg), pub, workerSpec{pool: *pool, slots: *slots, id: *id, nc: nc, isolation: mode, gpus: devs, mps: *mps,
		cpus: *cpus, memory: int64(mem)}, log, &st)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.out, "worker %s serving pool %s\n", w.ID(), *pool)
	if c := cfg.Checkpoints; c.Enabled() {
		fmt.Fprintf(e.out, "checkpoints travel through %s (keep %d)\n", c.Store, c.Keep)
	}
	if len(devs) > 0 {
		fmt.Fprintf(e.out, "gpus: %d (%s), a slot each: %s\n", len(devs), gpu.Model(devs), gpu.UUIDs(devs))
	}
	writeIsolation(e.out, w.Isolation())
	select {
	case <-ctx.Done():
	case <-w.Reclaimed():
		fmt.Fprintf(e.out, "worker %s reclaimed by its provider (spot notice): jobs requeued, exiting\n", w.ID())
		return nil
	}
	fmt.Fprintf(e.out, "worker %s draining (running jobs: %d)\n", w.ID(), w.Running())
	return nil
}

// selectGPUs reads --gpus: none without it, else the GPUs it names out of
// those nvidia-smi lists. Even an explicit list needs nvidia-smi: jobs are
// bound by UUID, and an index no one confirmed could name no device.
func selectGPUs(ctx context.Context, fs *flag.FlagSet, spec string, slots int) ([]gpu.Device, error) {
	if !flagSet(fs, "gpus") {
		return nil, nil
	}
	all, err := gpu.Detect(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("--gpus %s: %w", spec, err)
	}
	devs, err := gpu.Select(all, spec)
	if err != nil {
		return nil, usageError{"--" + err.Error()}
	}
	if slots > len(devs) {
		return nil, usageError{fmt.Sprintf("--slots %d is more than the %d GPUs of --gpus %s: on a GPU worker a slot is a GPU (leave --slots out to use them all)", slots, len(devs), spec)}
	}
	return devs, nil
}

// flagSet reports whether name was given on the command line (even empty).
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
