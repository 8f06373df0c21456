package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// KEDA's defaults, the comparison the hybrid bench prints: a ScaledObject
// polls its trigger every pollingInterval and scales to zero only after
// cooldownPeriod without activity.
const (
	KEDAPollingInterval = 30 * time.Second
	KEDACooldownPeriod  = 300 * time.Second
)

// HybridResult holds every figure of one RunHybrid. Each measure has one
// sample per run, except Release and ReleaseBeyondTTL, which have one per
// elastic worker that ran a job.
type HybridResult struct {
	RedisAddr string
	Namespace string
	Runs      int
	Tick      time.Duration
	Grace     time.Duration
	// IdleTTL is the elastic pool's idle time before release.
	IdleTTL time.Duration
	// ElasticJob is how long each job of the burst backlog runs.
	ElasticJob time.Duration

	// Reclaim runs from a core job's submit to its handler starting on the
	// fixed worker, whose only slot a lent burst job held.
	Reclaim Latency
	// ReclaimDecision is the first part of Reclaim: core submit to the lent
	// job's context being cancelled (the controller's tick, its preempt
	// request and the worker's wake-up).
	ReclaimDecision Latency
	// ReclaimHandover is the rest: the lent job's cancellation to the core
	// job starting (requeue, slot freed, claim).
	ReclaimHandover Latency
	// VictimStop is how long the lent job took to return once cancelled:
	// the part of its grace it used, not included in any reaction.
	VictimStop Latency

	// ScaleUp runs from submitting a burst backlog, while the fixed slot is
	// held by core work, to the provider's first Launch call.
	ScaleUp Latency
	// Registered runs from the same submit to the first elastic worker
	// appearing in the worker registry (informational: it includes the
	// worker's start, which a cloud VM would make far longer).
	Registered Latency

	// Release runs from an elastic worker's job finishing to the provider's
	// Release call for that worker, idle TTL included.
	Release Latency
	// ReleaseBeyondTTL is Release minus IdleTTL: the controller's own
	// reaction.
	ReleaseBeyondTTL Latency
}

// Print writes the figures, the aims and the KEDA comparison.
func (r HybridResult) Print(w io.Writer) {
	fmt.Fprintf(w, "ballast bench-hybrid: redis %s, namespace %s\n", r.RedisAddr, r.Namespace)
	fmt.Fprintf(w, "runs %d, controller tick %s, lent job grace %s, elastic idle_ttl %s, elastic jobs %s long\n\n",
		r.Runs, r.Tick, r.Grace, r.IdleTTL, r.ElasticJob)

	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "reaction\tsamples\tp50\tmax")
	row := func(name string, l Latency) {
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\n", name, l.Samples, millis(l.P50), millis(l.Max))
	}
	row("reclaim: core submitted -> core running", r.Reclaim)
	row("  of which: submit -> lent job cancelled", r.ReclaimDecision)
	row("  of which: lent job cancelled -> core running", r.ReclaimHandover)
	row("  lent job's stop (grace used, excluded)", r.VictimStop)
	row("scale-up: backlog submitted -> launch requested", r.ScaleUp)
	row("  backlog submitted -> elastic worker registered", r.Registered)
	row("release: job finished -> release requested (raw)", r.Release)
	row("  reaction beyond the idle TTL", r.ReleaseBeyondTTL)
	tw.Flush()
	fmt.Fprintln(w)

	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	fmt.Fprintf(w, "aim: reclaim under 1 s plus grace (max %s): %s\n", millis(r.Reclaim.Max), verdict(r.Reclaim.Samples > 0 && r.Reclaim.Max < time.Second))
	fmt.Fprintf(w, "aim: launch requested within one tick of %s (max %s): %s\n", r.Tick, millis(r.ScaleUp.Max),
		verdict(r.ScaleUp.Samples > 0 && r.ScaleUp.Max <= r.Tick))
	fmt.Fprintf(w, "KEDA defaults: polling interval %s -> scale-up reaction up to %s (ballast max %s); cooldown %s before scaling to zero -> release after %s or more (ballast max %s, idle_ttl %s included)\n",
		KEDAPollingInterval, KEDAPollingInterval, millis(r.ScaleUp.Max), KEDACooldownPeriod, KEDACooldownPeriod, millis(r.Release.Max), r.IdleTTL)
}
