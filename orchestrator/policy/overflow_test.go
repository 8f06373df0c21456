package policy

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/jobs"
)

func TestOverflow(t *testing.T) {
	core, burst := jobs.ClassCore, jobs.ClassBurst
	fxp, fxw := fixedWith(4, 4)
	pools := append(fxp,
		elasticPool("sp", PoolSpot, "eu", 0.2), // cheapest, never for core
		elasticPool("od-eu", PoolOnDemand, "eu", 1.2),
		elasticPool("od-us", PoolOnDemand, "us", 0.9))
	on := func(s Snapshot) Snapshot { s.Config.CoreOverflow = true; return s }
	c := func(id string, waited time.Duration, region string) Job {
		j := queued(id, core, QueueCore, ago(waited))
		j.Region = region
		return j
	}
	borrowed := running("b1", burst, fxw[0], ago(time.Minute))

	runCases(t, []planCase{
		{"off by default", snap(pools, fxw, c("c1", time.Hour, "")), t0, ""},
		{"a long wait goes to the cheapest on-demand pool, never spot", on(snap(pools, fxw, c("c1", 31*time.Minute, ""))), t0,
			"overflow(c1,od-us) scale_up(od-us,1)"},
		{"the pinned region is honoured", on(snap(pools, fxw, c("c1", 31*time.Minute, "eu"))), t0,
			"overflow(c1,od-eu) scale_up(od-eu,1)"},
		{"a short wait stays", on(snap(pools, fxw, c("c1", 29*time.Minute, ""))), t0, ""},
		{"reclaim comes first", on(snap(pools, fxw, borrowed, c("c1", time.Hour, ""))), t0, "reclaim(b1,f1) scale_up(sp,1)"},
		// The reclaimed slot goes to the head of the core queue (c2, the
		// longest wait): fixed workers take core work in queue order, so
		// overflowing c2 would pay on-demand for a job the slot is about to
		// take, and leave c1 waiting. The rest overflow in queue order.
		{"only what reclaim cannot place overflows, and not the job the reclaim serves",
			on(snap(pools, fxw, borrowed, c("c1", 40*time.Minute, ""), c("c2", time.Hour, ""), c("c3", 35*time.Minute, ""))), t0,
			"reclaim(b1,f1) overflow(c1,od-us) overflow(c3,od-us) scale_up(od-us,1) scale_up(sp,1)"},
	})
}
