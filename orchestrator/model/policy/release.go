package policy

import "fmt"

// release is rule 5. A draining worker that has emptied is handed back at
// once: it takes no work, and its billed time is paid whether it stays or
// goes. An idle worker that takes work is released once it has been idle for
// its pool's IdleTTL, but billing-aware: what is already paid (the current
// billed unit, the minimum billing) costs nothing more to keep, so the
// worker stays, ready for the next burst, until ReleaseMargin before the
// paid time runs out. A worker is released only if the other registered
// workers of its pool keep enough free slots for the queued work placed
// there (launches in flight do not count: they may not come), and no worker
// with a running job is ever released.
func (p *planner) release() {
	for _, w := range p.workers {
		d := p.demand[w.Pool]
		if d == nil || !p.idle(w) {
			continue
		}
		switch w.State {
		case WorkerDraining:
			p.add(Action{Kind: Release, Worker: w.ID, Pool: w.Pool, Rule: 5, Reason: "draining and empty"}, nil)
		case WorkerUp:
			if w.IdleSince.IsZero() {
				continue
			}
			idle := p.now.Sub(w.IdleSince)
			left := d.pool.PaidUntil(w.billingStart(), p.now).Sub(p.now)
			// While sized work waits for new workers of the pool (bins),
			// releasing one would only launch it again.
			if idle < d.pool.IdleTTL || left > p.cfg.ReleaseMargin || d.spare() < d.slots() || d.bins > 0 {
				continue
			}
			d.active--
			p.add(Action{
				Kind: Release, Worker: w.ID, Pool: w.Pool, Rule: 5,
				Reason: fmt.Sprintf("idle %s >= ttl %s; paid time left %s <= margin %s (%s billing); %d spare slots stay in the pool",
					idle, d.pool.IdleTTL, max(left, 0), p.cfg.ReleaseMargin, d.pool.Billing, d.spare()),
			}, nil)
		}
	}
}
