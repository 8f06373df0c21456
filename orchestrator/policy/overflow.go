package policy

import (
	"fmt"

	"github.com/ballastdev/ballast/jobs"
)

// overflow is rule 7, off unless Config.CoreOverflow is set: a queued core
// job that has waited its allowed delay (Job.MaxWait when the job has its
// own, else Config.CoreMaxWait) and still cannot get a fixed slot after
// rule 1 goes to the cheapest on-demand pool with room, for teams that
// would rather pay the premium than miss a deadline. Never spot: a core job
// must not lose its worker to a provider's whim. The longest waits go first.
func (p *planner) overflow() {
	if !p.cfg.CoreOverflow || p.short <= 0 {
		return
	}
	for _, j := range p.queue {
		if p.short <= 0 {
			return
		}
		wait := j.maxWait(p.cfg)
		if j.Class != jobs.ClassCore || j.Queue != QueueCore || !p.movable(j) || p.now.Sub(j.QueuedAt) < wait {
			continue
		}
		d := p.pickPool(j, false)
		if d == nil {
			continue
		}
		d.queued++
		p.short--
		p.coreQueued--
		p.add(Action{
			Kind: Overflow, Job: j.ID, Pool: d.pool.Name, Queue: QueueOverflow, Rule: 7,
			Reason: fmt.Sprintf("core queued %s >= max wait %s with no fixed slot; on-demand at %.2f/slot-hour",
				p.now.Sub(j.QueuedAt), wait, d.pool.PricePerSlotHour),
		})
	}
}
