package controller

import (
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// Router picks the queue of a new job.
type Router struct {
	// ElasticManaged is true when elastic workers serve the burst queue.
	// Without them burst work is lent to fixed workers through loan, so that
	// it runs at all; core work is still served first (strict priority).
	ElasticManaged bool
	// Held is true when teams have shares of the fixed quota and the
	// capacity policy runs: core work then waits in held until rule 9
	// admits it to core, within its team's share or as a loan. Without
	// the policy nothing would admit it, so the caller sets it only with
	// the policy on.
	Held bool
}

// Route returns the queue for spec: core jobs to core (held, with
// shares); burst jobs to burst
// (any elastic worker, spot included) when they can survive a spot reclaim,
// to ondemand when they cannot, and to loan when no elastic capacity is
// managed at all. A burst job pinned to a region (RegionLabel) waits in the
// regional form of its elastic queue, which only that region's workers read.
func (r Router) Route(spec jobs.Spec) queues.Queue {
	if spec.Class == jobs.ClassCore {
		if r.Held {
			return queues.QueueHeld
		}
		return queues.QueueCore
	}
	if !r.ElasticManaged {
		return queues.QueueLoan
	}
	return ElasticQueue(spec, 0, 1)
}

// ElasticQueue is where burst work waits for elastic capacity: burst when
// spot may take it (it checkpoints, it may be retried, and spot has taken it
// fewer than maxSpotPreemptions times), else ondemand; in either case the
// regional form when spec pins a region, so a worker of another region
// never takes it.
func ElasticQueue(spec jobs.Spec, spotPreemptions, maxSpotPreemptions int) queues.Queue {
	base := queues.QueueOnDemand
	if spec.Checkpointable && spec.Retryable && spotPreemptions < maxSpotPreemptions {
		base = queues.QueueBurst
	}
	return queues.RegionalQueue(base, spec.Labels[RegionLabel])
}
