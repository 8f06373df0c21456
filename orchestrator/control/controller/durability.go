package controller

import (
	"context"
	"log/slog"
	"time"

	"github.com/ballastdev/ballast/queues/redisinfo"
)

// checkRedisTimeout bounds CheckRedis.
const checkRedisTimeout = 5 * time.Second

// CheckRedis reads whether the Redis behind store keeps accepted jobs
// across a restart and under memory pressure, and logs the verdict: a
// warning per setting that loses work, naming the setting and the fix. The
// controller process calls it once at start, before it accepts work, so an
// operator sees the risk before a restart proves it. A Redis that refuses
// CONFIG is reported and otherwise ignored.
func CheckRedis(ctx context.Context, store DurabilityChecker, log *slog.Logger) redisinfo.Durability {
	// Bounded: an unreachable Redis must not hold up the start, which
	// reports it on its own.
	ctx, cancel := context.WithTimeout(ctx, checkRedisTimeout)
	defer cancel()
	d := store.CheckDurability(ctx)
	for _, p := range d.Problems {
		log.Warn("redis: "+p, "durable", false)
	}
	for _, n := range d.Notes {
		log.Warn("redis: "+n, "durable", d.Durable())
	}
	if d.Durable() {
		log.Info("redis keeps accepted jobs", "appendonly", d.Settings["appendonly"], "save", d.Settings["save"],
			"maxmemory-policy", d.Settings["maxmemory-policy"])
	}
	return d
}
