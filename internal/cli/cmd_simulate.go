package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/analysis/planner"
	"github.com/ballastdev/ballast/orchestrator/analysis/sim"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// simFlags are the simulation settings shared by simulate and plan; the
// pools, prices and watermarks come from the config.
type simFlags struct {
	quota      *int
	high, low  *float64
	tick       *time.Duration
	spotRate   *float64
	ckptEvery  *time.Duration
	ckptCost   *overheadFlag
	elasticMax *int
}

func addSimFlags(fs *flag.FlagSet) *simFlags {
	ckptCost := &overheadFlag{d: 30 * time.Second}
	fs.Var(ckptCost, "checkpoint-overhead", "slot time a stopped job spends checkpointing: a duration, or measured (the p90 of the upload times workers recorded in Redis) or measured-median")
	return &simFlags{
		quota:      fs.Int("quota", -1, "fixed slots (default: the config's fixed pools)"),
		high:       fs.Float64("high", 0, "high watermark (default: the config's)"),
		low:        fs.Float64("low", 0, "low watermark (default: the config's)"),
		tick:       fs.Duration("tick", sim.DefaultTick, "controller tick in virtual time"),
		spotRate:   fs.Float64("spot-reclaim-rate", 0, "spot reclaims per spot worker-hour"),
		ckptEvery:  fs.Duration("checkpoint-interval", 10*time.Minute, "how often checkpointable jobs checkpoint"),
		ckptCost:   ckptCost,
		elasticMax: fs.Int("elastic-max", 0, "override every elastic pool's max_workers (0: as configured); a trace bigger than the dev pools needs it"),
	}
}

// options builds the simulation from the config and the flags; a measured
// checkpoint overhead is read from the config's Redis (errOut says what
// was measured).
func (f *simFlags) options(ctx context.Context, cfg config.Config, seed uint64, errOut io.Writer) (sim.Options, error) {
	overhead, err := f.ckptCost.resolve(ctx, cfg, errOut)
	if err != nil {
		return sim.Options{}, err
	}
	o := sim.Options{Config: cfg.PolicyConfig(), Tick: *f.tick, SpotReclaimRate: *f.spotRate,
		CheckpointInterval: *f.ckptEvery, CheckpointOverhead: overhead, Seed: seed,
		CoreMaxWaitByTemplate: cfg.CoreMaxWaitByTemplate()}
	if *f.high > 0 {
		o.Config.High = *f.high
	}
	if *f.low > 0 {
		o.Config.Low = *f.low
	}
	quotas := cfg.FixedQuota()
	quota := 0
	for _, n := range quotas {
		quota += n
	}
	// Several fixed pools are flavors: each keeps its labels, price and
	// machine size, with its own quota. One is modelled as the simulator's
	// single quota, which --quota may resize.
	flavors := len(quotas) > 1
	if flavors && *f.quota >= 0 {
		return o, usageError{fmt.Sprintf("--quota %d: the config buys quota per flavor (%d fixed pools); set each pool's slots in the config instead", *f.quota, len(quotas))}
	}
	for _, p := range cfg.PolicyPools() {
		if p.Kind == policy.PoolFixed {
			if flavors {
				o.Pools = append(o.Pools, p)
			} else {
				o.FixedPricePerSlotHour = p.PricePerSlotHour
			}
			continue
		}
		if *f.elasticMax > 0 {
			p.MaxWorkers = *f.elasticMax
		}
		o.Pools = append(o.Pools, p)
	}
	o.FixedSlots = quota
	if flavors {
		o.FixedSlotsByPool = quotas
	} else if *f.quota >= 0 {
		o.FixedSlots = *f.quota
	}
	return o, nil
}

func runSimulate(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "simulate", "simulate (--trace FILE | --synthetic N | --alibaba-gpu FILE | --alibaba-spot FILE | --pai FILE | --history D) [flags]")
	cfgPath := configFlag(fs)
	src := addTraceFlags(fs)
	sf := addSimFlags(fs)
	tune := fs.Bool("tune", true, "also run a hybrid with watermarks tuned by a sweep at the same quota")
	out := outputFlag(fs)
	if err := parseArgs(fs, args, out, 0, "simulate takes flags only"); err != nil {
		return err
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	tr, err := src.load(ctx, *cfgPath, e.errOut)
	if err != nil {
		return err
	}
	base, err := sf.options(ctx, cfg, *src.seed, e.errOut)
	if err != nil {
		return err
	}
	tr, relaxed := planner.RelaxUnknownLabels(tr, base.Pools)
	if len(relaxed) > 0 {
		fmt.Fprintf(e.errOut, "the trace's jobs require %s, which no pool declares: simulated as if every worker carried them (declare them on the pools to simulate per model)\n",
			strings.Join(relaxed, ", "))
	}
	started := time.Now()
	named := map[string]sim.Options{
		"all fixed (peak)": sim.AllFixed(tr, base),
		"all elastic":      sim.AllElastic(base),
		fmt.Sprintf("hybrid %.0f/%.0f", 100*base.Config.High, 100*base.Config.Low): sim.Hybrid(base, base.Config.High, base.Config.Low),
	}
	results, err := untilCancelled(ctx, func() ([]sim.Named, error) {
		results, err := sim.Compare(tr, named)
		if err != nil || !*tune {
			return results, err
		}
		best, _, err := planner.SimulatedSweep(tr, planner.SweepOptions{Base: base, Quotas: []int{base.FixedSlots}})
		if err != nil {
			return nil, err
		}
		return append(results, sim.Named{Name: fmt.Sprintf("hybrid tuned %.0f/%.0f", 100*best.Watermarks.High, 100*best.Watermarks.Low),
			Result: best.Result}), nil
	})
	if err != nil {
		return err
	}
	wall := time.Since(started)
	if *out == "json" {
		return writeJSON(e.out, map[string]any{"trace": tr.Name, "jobs": len(tr.Jobs), "results": results})
	}
	fmt.Fprintf(e.out, "trace %s: %d jobs over %.1f days; quota %d slots; %d simulations in %s\n\n",
		tr.Name, len(tr.Jobs), tr.Span().Hours()/24, base.FixedSlots, len(results), wall.Round(time.Millisecond))
	rows := make([][]any, len(results))
	for i, n := range results {
		r := n.Result
		rows[i] = []any{n.Name, r.FixedSlots, fmt.Sprintf("%.2f", r.Cost.Fixed), fmt.Sprintf("%.2f", r.Cost.OnDemand),
			fmt.Sprintf("%.2f", r.Cost.Spot), fmt.Sprintf("%.2f", r.Cost.Total), fmt.Sprintf("%.0f%%", 100*r.FixedIdleShare),
			waits(r.ElasticWait), round(r.CoreWait.P95), r.Preemptions.Count(),
			fmt.Sprintf("%.1f", r.LostWork), r.DeadlineMisses, r.Unfinished}
	}
	return table(e.out, "STRATEGY\tFIXED\tCOST FIXED\tON-DEMAND\tSPOT\tTOTAL\tFIXED IDLE\tBURST WAIT P50/P95/P99\tCORE WAIT P95\tPREEMPTIONS\tLOST SLOT-H\tDEADLINE MISSES\tUNFINISHED", rows)
}

func waits(p sim.Percentiles) string {
	return round(p.P50) + "/" + round(p.P95) + "/" + round(p.P99)
}

func round(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return d.Round(time.Second).String()
}
