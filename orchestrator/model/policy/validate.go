package policy

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/shares"
)

// Validate reports every inconsistency in s, each naming its field: unknown
// or duplicate names, impossible counts, and jobs whose queue, worker or
// pending action contradicts their class or state. Decide copes with all of
// them (see Decide), but a snapshot builder that produces them has a bug.
func (s Snapshot) Validate() error {
	var p problems
	s.Config.validate(&p, "config")
	pools := s.validatePools(&p)
	for _, pl := range s.Pools {
		if pl.Kind.Elastic() && pl.Billing.Unit() > time.Second && s.Config.ReleaseMargin <= 0 {
			p.add("config.release_margin", fmt.Sprintf("is %v, so %s workers of pool %q are never released: "+
				"a billed minute or hour is always partly ahead; write at least the controller tick, such as 2m",
				s.Config.ReleaseMargin, pl.Billing, pl.Name))
			break
		}
	}
	workers := s.validateWorkers(&p, pools)
	s.validateShares(&p)
	s.validateJobs(&p, pools, workers)
	for i, l := range s.Launches {
		at := fmt.Sprintf("launches[%d]", i)
		if pl, ok := pools[l.Pool]; !ok || !pl.Kind.Elastic() {
			p.add(at+".pool", fmt.Sprintf("%q is not an elastic pool of the snapshot", l.Pool))
		}
		if l.Count <= 0 {
			p.add(at+".count", fmt.Sprintf("is %d; a launch asks for at least one worker", l.Count))
		}
	}
	return p.err()
}

func (s Snapshot) validatePools(p *problems) map[string]Pool {
	pools := make(map[string]Pool, len(s.Pools))
	for i, pl := range s.Pools {
		at := fmt.Sprintf("pools[%d]", i)
		if pl.Name == "" {
			p.add(at+".name", "is empty; every pool needs a name")
		} else if _, dup := pools[pl.Name]; dup {
			p.add(at+".name", fmt.Sprintf("%q is used twice", pl.Name))
		} else {
			pools[pl.Name] = pl
		}
		switch pl.Kind {
		case PoolFixed, PoolOnDemand, PoolSpot:
		default:
			p.add(at+".kind", fmt.Sprintf("%q is unknown (use fixed, ondemand or spot)", pl.Kind))
		}
		if pl.PricePerSlotHour < 0 {
			p.add(at+".price_per_slot_hour", "is negative")
		}
		if pl.MinBilling < 0 || pl.StartupDelay < 0 || pl.IdleTTL < 0 {
			p.add(at, "min_billing, startup_delay and idle_ttl cannot be negative")
		}
		if !(pl.CPUs >= 0) || math.IsInf(pl.CPUs, 0) || pl.Memory < 0 {
			p.add(at+".cpus", fmt.Sprintf("%v CPUs and %d bytes per worker: write 0 for not declared, or a finite positive amount", pl.CPUs, pl.Memory))
		}
		if !pl.Kind.Elastic() {
			continue
		}
		switch pl.Billing {
		case BillingPerSecond, BillingPerMinute, BillingPerHour:
		default:
			p.add(at+".billing", fmt.Sprintf("%q is unknown (use per_second, per_minute or per_hour)", pl.Billing))
		}
		if pl.SlotsPerWorker <= 0 {
			p.add(at+".slots_per_worker", fmt.Sprintf("is %d; an elastic worker runs at least one job", pl.SlotsPerWorker))
		}
		if pl.MaxWorkers < 0 {
			p.add(at+".max_workers", fmt.Sprintf("is %d; write 0 to disable the pool", pl.MaxWorkers))
		}
	}
	return pools
}

func (s Snapshot) validateWorkers(p *problems, pools map[string]Pool) map[string]Worker {
	workers := make(map[string]Worker, len(s.Workers))
	for _, w := range s.Workers {
		at := fmt.Sprintf("workers[%s]", w.ID)
		if w.ID == "" {
			p.add(at+".id", "is empty")
		} else if _, dup := workers[w.ID]; dup {
			p.add(at+".id", "is used twice")
		} else {
			workers[w.ID] = w
		}
		if _, ok := pools[w.Pool]; !ok {
			p.add(at+".pool", fmt.Sprintf("%q is not a pool of the snapshot", w.Pool))
		}
		if w.Slots < 0 || w.Busy < 0 || w.Busy > w.Slots {
			p.add(at+".busy", fmt.Sprintf("%d busy of %d slots is impossible", w.Busy, w.Slots))
		}
		if !(w.CPUs >= 0) || math.IsInf(w.CPUs, 0) || w.Memory < 0 {
			p.add(at+".cpus", fmt.Sprintf("%v CPUs and %d bytes of memory: write 0 for not accounted, or a finite positive amount", w.CPUs, w.Memory))
		}
		for k := range w.Labels {
			if k == "" {
				p.add(at+".labels", "has an empty label name")
			}
		}
		switch w.State {
		case WorkerStarting, WorkerUp, WorkerDraining:
		default:
			p.add(at+".state", fmt.Sprintf("%q is unknown (use starting, up or draining)", w.State))
		}
	}
	return workers
}

func (s Snapshot) validateJobs(p *problems, pools map[string]Pool, workers map[string]Worker) {
	seen := make(map[string]bool, len(s.Jobs))
	for _, j := range s.Jobs {
		at := fmt.Sprintf("jobs[%s]", j.ID)
		if j.ID == "" || seen[j.ID] {
			p.add(at+".id", "is empty or used twice")
		}
		seen[j.ID] = true
		if j.Class != jobs.ClassCore && j.Class != jobs.ClassBurst {
			p.add(at+".class", fmt.Sprintf("%q is unknown (use core or burst)", j.Class))
		}
		if j.HasMaxWait && j.MaxWait < 0 {
			p.add(at+".max_wait", fmt.Sprintf("is %v; write 0 to overflow at once, or a positive wait", j.MaxWait))
		}
		switch j.State {
		case jobs.StateQueued:
			if !slices.Contains(queuesFor[j.Class], j.Queue) {
				p.add(at+".queue", fmt.Sprintf("%q is not a queue for a queued %s job", j.Queue, j.Class))
			}
			if j.Queue == QueueOverflow || j.PendingAction == Overflow {
				if pools[j.Pool].Kind != PoolOnDemand {
					p.add(at+".pool", fmt.Sprintf("%q is not an on-demand pool; an overflowed core job needs one", j.Pool))
				}
			}
		case jobs.StateRunning:
			w, ok := workers[j.Worker]
			if !ok {
				p.add(at+".worker", fmt.Sprintf("%q is not a worker of the snapshot", j.Worker))
			} else if j.Class == jobs.ClassCore && pools[w.Pool].Kind == PoolSpot {
				p.add(at+".worker", "a core job runs on spot capacity")
			}
		default:
			p.add(at+".state", fmt.Sprintf("%q is not queued or running; leave terminal jobs out", j.State))
		}
		s.validateSize(p, at, j, pools, workers)
		if msg := j.pendingProblem(pools, workers); msg != "" {
			p.add(at+".pending_action", msg)
		}
		if j.Grace < 0 || j.Rebalanced < 0 {
			p.add(at+".grace", fmt.Sprintf("grace %v and rebalanced %d: neither can be negative", j.Grace, j.Rebalanced))
		}
		if msg := j.homeProblem(); msg != "" {
			p.add(at+".home", msg)
		}
	}
}

// validateShares checks the team shares (rule 9), when on, and the tick.
// Not against the fixed slots of the snapshot's workers: those are the
// ones up, and while a fixed worker is down (dead, restarting) they may
// be fewer than the shares add up to, a state the controller must still
// decide in (rule 9 divides what is up). The shares are held to the
// configured quota where it is known: the config's validation, and the
// simulator's options.
func (s Snapshot) validateShares(p *problems) {
	c := s.Config.Shares
	if !c.On() {
		return
	}
	if s.Config.Tick <= 0 {
		p.add("config.tick", fmt.Sprintf("is %v; with shares on it must be the controller's tick, such as 1s: "+
			"work borrows only if its grace plus a tick fits reclaim_within", s.Config.Tick))
	}
	if err := c.Validate(0, s.Config.Tick); err != nil {
		var se *shares.Error
		if errors.As(err, &se) {
			for _, msg := range se.Problems {
				p.add("config.shares", msg)
			}
		} else {
			p.add("config.shares", err.Error())
		}
	}
}

// queuesFor lists the queues a queued job of each class may wait in.
var queuesFor = map[jobs.Class][]Queue{
	jobs.ClassCore:  {QueueCore, QueueOverflow, QueueHeld},
	jobs.ClassBurst: {QueueBurst, QueueLoan},
}

// pendingProblem says why j's in-flight move cannot be, or "" if it can.
func (j Job) pendingProblem(pools map[string]Pool, workers map[string]Worker) string {
	kind := pools[workers[j.Worker].Pool].Kind
	ok := true
	switch j.PendingAction {
	case "":
	case Lend:
		ok = j.queued() && j.Class == jobs.ClassBurst && j.Queue == QueueBurst
	case Unlend:
		ok = j.queued() && j.Queue == QueueLoan
	case Overflow:
		ok = j.queued() && j.Class == jobs.ClassCore && (j.Queue == QueueCore || j.Queue == QueueHeld)
	case Admit:
		ok = j.queued() && j.Class == jobs.ClassCore && j.Queue == QueueHeld
	case Rehome:
		ok = j.queued() && j.Class == jobs.ClassBurst && j.Queue == QueueBurst && j.Home.Known
	case Reclaim:
		// Core work is reclaimed too under team shares (rule 9).
		ok = j.running() && kind == PoolFixed
	case Migrate:
		ok = j.running() && j.Checkpointable && kind.Elastic()
	case Repack:
		ok = j.running() && j.Checkpointable && j.Class == jobs.ClassBurst && kind.Elastic()
	case Unplace:
		ok = j.queued() && len(j.Placed) > 0
	default:
		return fmt.Sprintf("%q is not a move of a job", j.PendingAction)
	}
	if ok {
		return ""
	}
	if j.running() {
		return fmt.Sprintf("%s does not apply to a running %s job on a %q worker", j.PendingAction, j.Class, kind)
	}
	return fmt.Sprintf("%s does not apply to a %s %s job in %q", j.PendingAction, j.State, j.Class, j.Queue)
}

// validateSize checks a job's size and placement: counts that cannot be,
// and members on workers that are unknown, too small, of the wrong kind or
// region, or a placement that contradicts the job's state.
func (s Snapshot) validateSize(p *problems, at string, j Job, pools map[string]Pool, workers map[string]Worker) {
	if j.Slots < 0 || j.Replicas < 0 {
		p.add(at+".slots", fmt.Sprintf("%d slots x %d replicas: write 0 or 1 for one, or a positive count", j.Slots, j.Replicas))
	}
	if j.Share < 0 || j.Share >= 1000 || (j.Share > 0 && (j.Slots > 1 || j.Replicas > 1)) {
		p.add(at+".share", fmt.Sprintf("%d thousandths of a GPU: write 1 to 999 on a job of one slot and one member, or 0 for whole slots", j.Share))
	}
	if !(j.CPUs >= 0) || math.IsInf(j.CPUs, 0) || j.Memory < 0 {
		p.add(at+".cpus", fmt.Sprintf("%v CPUs and %d bytes of memory: write 0 for not accounted, or a finite positive amount", j.CPUs, j.Memory))
	}
	for k := range j.Requires {
		if k == "" {
			p.add(at+".requires", "has an empty label name")
		}
	}
	if len(j.Placed) == 0 {
		if j.running() && j.gang() {
			p.add(at+".placed", fmt.Sprintf("is empty; a running gang lists the worker of each of its %d members", j.replicas()))
		}
		return
	}
	switch {
	case !j.sized() && !(j.running() && len(j.Placed) == 1):
		p.add(at+".placed", "is set for a one-slot unsized job; those start from their queue, never placed")
	case len(j.Placed) != j.replicas():
		p.add(at+".placed", fmt.Sprintf("lists %d workers for %d members", len(j.Placed), j.replicas()))
	case j.running() && j.Placed[0] != j.Worker:
		p.add(at+".placed", fmt.Sprintf("starts with %q; a running job's first member runs on its Worker %q", j.Placed[0], j.Worker))
	case j.queued() && j.PendingAction != "" && j.PendingAction != Unplace:
		p.add(at+".placed", fmt.Sprintf("is set while %s is in flight; a placed job is not moved", j.PendingAction))
	}
	region, first := "", true
	for i, id := range j.Placed {
		w, ok := workers[id]
		switch {
		case !ok && j.queued():
			// A worker gone since: rule 8 takes the placement back.
			continue
		case !ok:
			p.add(fmt.Sprintf("%s.placed[%d]", at, i), fmt.Sprintf("%q is not a worker of the snapshot", id))
			continue
		case w.Slots < j.slots():
			p.add(fmt.Sprintf("%s.placed[%d]", at, i), fmt.Sprintf("worker %q has %d slots, the job needs %d", id, w.Slots, j.slots()))
		case j.Class == jobs.ClassCore && pools[w.Pool].Kind == PoolSpot:
			p.add(fmt.Sprintf("%s.placed[%d]", at, i), "a core job is placed on spot capacity")
		}
		if r := pools[w.Pool].Region; first {
			region, first = r, false
		} else if r != region {
			p.add(fmt.Sprintf("%s.placed[%d]", at, i), fmt.Sprintf("is in region %q, the members before it in %q; a gang runs in one region", r, region))
		}
	}
}
