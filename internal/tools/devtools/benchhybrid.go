package devtools

import (
	"context"

	"github.com/ballastdev/ballast/internal/cli"
	"github.com/ballastdev/ballast/internal/tools/bench"
)

// runBenchHybrid measures the hybrid controller's reactions (reclaim,
// scale-up, release); its elastic workers are children of this binary.
func runBenchHybrid(ctx context.Context, inv *cli.Invocation, args []string) error {
	fs := inv.Flags("bench-hybrid", "bench-hybrid [--redis ADDR] [--runs N] [--tick D] [--grace D]")
	addr := fs.String("redis", bench.DefaultRedisAddr, "Redis to measure against (a fresh namespace is used and removed)")
	runs := fs.Int("runs", bench.DefaultHybridRuns, "repetitions of each measure")
	tick := fs.Duration("tick", bench.DefaultHybridTick, "controller tick (the default is production's)")
	grace := fs.Duration("grace", bench.DefaultHybridGrace, "grace period of the lent job a reclaim preempts (it stops at once, so the figure excludes it)")
	if err := inv.Parse(fs, args); err != nil {
		return err
	}
	res, err := bench.RunHybrid(ctx, bench.HybridOptions{RedisAddr: *addr, Runs: *runs, Tick: *tick, Grace: *grace,
		Out: inv.Stderr()})
	// The runs completed before a failure still have figures worth printing.
	res.Print(inv.Stdout())
	return err
}
