package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/control/telemetry"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/web/api"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/leader"
	"github.com/ballastdev/ballast/queues/redisinfo"
	"github.com/ballastdev/ballast/queues/registry"
)

func runStatus(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "status", "status [--config FILE] [-o json]")
	cfgPath := configFlag(fs)
	out := outputFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	store, closeFn, err := storeFor(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeFn()
	st, err := api.CollectStatus(ctx, store, registry.New(store), leader.New(store), redisinfo.New(store))
	if err != nil {
		return err
	}
	if st.DataLoss == nil && st.Epoch.IsZero() {
		st.DataLoss = lossSeenInStream(ctx, cfg, store)
	}
	// This config's: the CLI reads the store itself, not the controller.
	en := enginesOf(cfg)
	st.Engines = &en
	if *out == "json" {
		if err := writeJSON(e.out, st); err != nil {
			return err
		}
		return lossError(st.DataLoss)
	}
	now := time.Now()
	if st.DataLoss != nil {
		fmt.Fprintf(e.out, "DATA LOSS: %s\n  fix: %s\n\n", st.DataLoss.Message(), queues.LossFix)
	}
	fmt.Fprintf(e.out, "leader: %s\n", dash(st.Leader))
	printRedis(e, st.Redis)
	printTopology(e, cfg, st.Topology)
	printEngines(e, *st.Engines)
	fmt.Fprintln(e.out)
	rows := make([][]any, len(st.Workers))
	for i, w := range st.Workers {
		state := "up"
		if w.Draining {
			state = "draining"
		}
		rows[i] = []any{w.ID, w.Pool, fmt.Sprintf("%d/%d", w.Busy, w.Slots), state, ago(w.LastBeat, now), ago(w.StartedAt, now),
			isolationSummary(w.Isolation)}
	}
	if err := table(e.out, "WORKER\tPOOL\tBUSY\tSTATE\tHEARTBEAT\tSTARTED\tISOLATION", rows); err != nil {
		return err
	}
	for _, w := range st.Workers {
		if w.Isolation != nil && len(w.Isolation.Limits) > 0 || w.Isolation != nil && w.Isolation.Reason != "" {
			fmt.Fprintf(e.out, "\n%s ", w.ID)
			writeIsolation(e.out, w.Isolation)
		}
	}
	writeGPUs(e.out, st.Workers)
	fmt.Fprintln(e.out)
	if err := printPools(e, cfg, st); err != nil {
		return err
	}
	fmt.Fprintln(e.out)
	rows = make([][]any, len(st.Queues))
	for i, q := range st.Queues {
		rows[i] = []any{q.Queue, q.Pending, q.Scheduled, q.Active, fmt.Sprintf("%.1fs", q.OldestPendingSeconds)}
	}
	if err := table(e.out, "QUEUE\tPENDING\tSCHEDULED\tACTIVE\tOLDEST", rows); err != nil {
		return err
	}
	fmt.Fprintf(e.out, "\nlast %d jobs:", st.Recent)
	for _, s := range []jobs.State{jobs.StateQueued, jobs.StateRunning, jobs.StateSucceeded, jobs.StateFailed, jobs.StateCancelled} {
		fmt.Fprintf(e.out, " %s %d", s, st.Counts[s])
	}
	fmt.Fprintln(e.out)
	if err := printOverflowed(e, st); err != nil {
		return err
	}
	return lossError(st.DataLoss)
}

// printRedis says whether Redis keeps accepted jobs, and what to change
// when it does not: status is where an operator looks before trusting it.
func printRedis(e *env, d redisinfo.Durability) {
	switch {
	case !d.Known:
		fmt.Fprintln(e.out, "redis: durability unknown")
	case d.Durable():
		fmt.Fprintf(e.out, "redis: durable (appendonly %s, save %q, maxmemory-policy %s)\n",
			d.Settings["appendonly"], d.Settings["save"], d.Settings["maxmemory-policy"])
	default:
		fmt.Fprintln(e.out, "redis: NOT durable: accepted jobs can be lost")
	}
	for _, p := range d.Problems {
		fmt.Fprintf(e.out, "  - %s\n", p)
	}
	for _, n := range d.Notes {
		fmt.Fprintf(e.out, "  note: %s\n", n)
	}
}

// printTopology says which Redis topology holds the namespace: the mode,
// the addresses the config dials, and the masters serving now (after a
// failover they differ from what the operator started).
func printTopology(e *env, cfg config.Config, t redisinfo.Topology) {
	fmt.Fprintf(e.out, "redis topology: %s via %s; masters now: %s\n", t.Mode,
		strings.Join(cfg.Redis.Endpoints(), ", "), dash(strings.Join(t.Masters, ", ")))
	if t.Mode == "cluster" {
		fmt.Fprintf(e.out, "  namespace keys %s: slot %d on %s\n", t.HashTag, t.Slot, dash(t.SlotMaster))
	}
	if t.Error != "" {
		fmt.Fprintf(e.out, "  note: %s\n", t.Error)
	}
}

// printEngines names the NATS servers and the provider.
func printEngines(e *env, en insight.Engines) {
	fmt.Fprintf(e.out, "nats: %s; stream %s with %d replica(s)\nprovider: %s\n", dash(strings.Join(en.NATS, ", ")),
		dash(en.Stream), en.StreamReplicas, en.Provider)
}

// printOverflowed lists the core jobs running or waiting on on-demand
// capacity because the quota was full for longer than they may wait.
func printOverflowed(e *env, st api.Status) error {
	fmt.Fprintf(e.out, "\noverflowed to on-demand (rule 7): %d\n", len(st.Overflowed))
	if len(st.Overflowed) == 0 {
		return nil
	}
	rows := make([][]any, len(st.Overflowed))
	for i, o := range st.Overflowed {
		rows[i] = []any{o.ID, dash(o.Template), o.State, o.Queue, dash(o.Pool), dash(o.Worker), fmt.Sprintf("%.1fs", o.WaitedSeconds)}
	}
	return table(e.out, "JOB\tTEMPLATE\tSTATE\tQUEUE\tPOOL\tWORKER\tWAITED", rows)
}

// printPools shows each pool's slots and what it costs right now, from the
// same snapshot the controller exports as metrics.
func printPools(e *env, cfg config.Config, st api.Status) error {
	snap := telemetry.SnapshotOf(time.Now(), st.Queues, st.Workers, cfg.PolicyPools(), cfg.FixedQuota())
	rows := make([][]any, len(snap.Pools))
	total := 0.0
	for i, p := range snap.Pools {
		workers := 0
		for _, n := range p.Workers {
			workers += n
		}
		cost := snap.CostPerHourByPool[p.Pool]
		total += cost
		rows[i] = []any{p.Pool, p.Kind, p.Busy, p.Idle, workers, fmt.Sprintf("%.2f", cost)}
	}
	if err := table(e.out, "POOL\tKIND\tBUSY\tIDLE\tWORKERS\tCOST/H", rows); err != nil {
		return err
	}
	idle := "n/a (no fixed worker up)"
	if !math.IsNaN(snap.FixedIdleRatio) {
		idle = fmt.Sprintf("%.0f%%", 100*snap.FixedIdleRatio)
	}
	fmt.Fprintf(e.out, "fixed quota idle now: %s; spending %.2f per hour\n", idle, total)
	return nil
}

// writeGPUs shows each GPU worker's GPUs on one line, index:job ("-" free),
// with the worker's GPU model:
//
//	w-1 gpus 0:job-abc 1:- 2:- 3:job-def  (NVIDIA A100-SXM4-80GB)
func writeGPUs(out io.Writer, ws []queues.WorkerInfo) {
	first := true
	for _, w := range ws {
		if len(w.GPUs) == 0 {
			continue
		}
		if first {
			fmt.Fprintln(out)
			first = false
		}
		fmt.Fprintf(out, "%s gpus %s\n", w.ID, gpuLine(w))
	}
}

// gpuLine is "0:job-abc 1:- ...  (model)" for a GPU worker; a GPU that
// jobs share shows them and how much of it they hold, "2:job-a,job-b(0.75)".
func gpuLine(w queues.WorkerInfo) string {
	parts := make([]string, len(w.GPUs))
	for i, g := range w.GPUs {
		parts[i] = fmt.Sprintf("%d:%s", g.Index, dash(g.Job))
		if g.Share > 0 {
			parts[i] += "(" + strconv.FormatFloat(float64(g.Share)/1000, 'f', -1, 64) + ")"
		}
	}
	line := strings.Join(parts, " ")
	if m := w.Labels[queues.LabelGPUModel]; m != "" {
		line += "  (" + m + ")"
	}
	return line
}
