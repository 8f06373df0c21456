package policy

import (
	"fmt"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Rehome moves a queued burst job to the elastic queue it belongs in
// (rule 3): on-demand only once it may not go to spot, and its pinned
// region's form when it is pinned. Action.Home names the target; Queue
// stays QueueBurst, since the policy counts every elastic queue as one
// backlog.
const Rehome ActionKind = "rehome"

// ElasticHome is which of several elastic queues a queued burst job waits
// in. The controller has four forms of the elastic backlog (burst,
// ondemand, and each pinned to a region); the policy counts them as one,
// QueueBurst, and reads this only to see that a job waits where its
// workers look. A snapshot whose elastic workers choose what they may run
// from one queue (the simulator's) leaves it zero, and nothing is re-homed.
type ElasticHome struct {
	// Known says the other fields describe where the job waits. The
	// controller leaves it false for a job pinned to a region that has no
	// queue (a malformed pin from before pins were checked).
	Known bool
	// OnDemand is the queue only on-demand workers read: spot may not
	// take the job.
	OnDemand bool
	// Region is the region the queue is pinned to, "" for any.
	Region string
}

// String renders the home the way the queues are named.
func (h ElasticHome) String() string {
	s := "burst"
	if h.OnDemand {
		s = "ondemand"
	}
	if h.Region != "" {
		s += "@" + h.Region
	}
	return s
}

// home is the elastic queue j belongs in: on-demand only once it is not
// spot-eligible, or once it is there already (a job sent off spot stays
// off it, even if a raised spot budget would allow it back), in the
// region it is pinned to.
func (j *Job) home(maxSpotPreemptions int) ElasticHome {
	return ElasticHome{Known: true, OnDemand: j.Home.OnDemand || !j.spotEligible(maxSpotPreemptions), Region: j.Region}
}

// rehome is the placement half of rule 3 that the queues need: a queued
// burst job waiting in the wrong elastic queue goes to the right one. A
// spot notice or a reclaim sends a job back to plain burst; if its spot
// budget is spent there, spot workers would still take it, and if it is
// pinned, a worker of another region would. It runs after the rules that
// move jobs between loan and burst, so a job lent this tick stays lent.
func (p *planner) rehome() {
	if p.ix.knownHomes == 0 {
		return
	}
	for j := range merged(false, p.ix.queue(QueueBurst, string(jobs.ClassBurst))) {
		if !j.Home.Known || !p.movable(j) {
			continue
		}
		to := j.home(p.cfg.MaxSpotPreemptions)
		if to == j.Home {
			continue
		}
		reason := "pinned to region " + to.Region
		switch {
		case to.OnDemand != j.Home.OnDemand:
			reason = fmt.Sprintf("spot budget spent (%d of %d spot reclaims, or not checkpointable and retryable): on-demand only",
				j.SpotPreemptions, p.cfg.MaxSpotPreemptions)
		case to.Region == "":
			reason = "not pinned: a worker of any region may take it"
		}
		p.add(Action{Kind: Rehome, Job: j.ID, Queue: QueueBurst, Home: to, Rule: 3,
			Reason: fmt.Sprintf("waits in %s, belongs in %s: %s", j.Home, to, reason)}, j)
	}
}

// homeProblem says why j's elastic home cannot be, or "" if it can.
func (j Job) homeProblem() string {
	switch {
	case j.Home == ElasticHome{}:
		return ""
	case !j.Home.Known:
		return "is set but not known; leave it zero"
	case !j.queued() || j.Class != jobs.ClassBurst || j.Queue != QueueBurst:
		return fmt.Sprintf("is set for a %s %s job in %q; only queued burst work in the elastic queues has one", j.State, j.Class, j.Queue)
	}
	return ""
}
