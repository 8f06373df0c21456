package controller

import (
	"github.com/ballastdev/ballast/jobs"
	"github.com/ballastdev/ballast/queues"
)

// Router picks the queue of a new job.
type Router struct {
	// ElasticManaged is true when elastic workers serve the burst queue.
	// Without them burst work is lent to fixed workers through loan, so that
	// it runs at all; core work is still served first (strict priority).
	ElasticManaged bool
}

// Route returns the queue for spec: core jobs to core; burst jobs to burst
// when elastic capacity is managed, else to loan.
func (r Router) Route(spec jobs.Spec) queues.Queue {
	if spec.Class == jobs.ClassCore {
		return queues.QueueCore
	}
	if r.ElasticManaged {
		return queues.QueueBurst
	}
	return queues.QueueLoan
}
