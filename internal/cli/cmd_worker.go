package cli

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/ballastdev/ballast/orchestrator/events"
	"github.com/ballastdev/ballast/workers/isolation"
)

func runWorker(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "worker", "worker [--config FILE] --pool NAME [--slots N] [--isolation auto|v2|v1|off]")
	cfgPath := configFlag(fs)
	pool := fs.String("pool", "fixed", "pool this worker serves")
	slots := fs.Int("slots", 0, "jobs run at once (default: the pool's slots, or slots_per_worker for elastic pools)")
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
	nc, err := connectNATS(cfg, "ballast-worker")
	if err != nil {
		log.Warn("running without events and control wake-ups (preemption waits for the heartbeat)", "err", err)
		nc = nil
	} else {
		defer nc.Close()
		pub = events.NewNATSPublisher(nc, subjects(cfg))
	}
	var st stack
	defer func() { st.stop() }() // a closure: st grows after this line
	if err := startTracing(ctx, "ballast-worker", &st); err != nil {
		return err
	}
	w, err := startWorker(ctx, cfg, newStore(rdb, cfg), pub, workerSpec{pool: *pool, slots: *slots, id: *id, nc: nc, isolation: mode}, log, &st)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.out, "worker %s serving pool %s\n", w.ID(), *pool)
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
