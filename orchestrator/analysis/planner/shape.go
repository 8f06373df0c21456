package planner

import (
	"cmp"
	"math"
	"slices"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// Shape is one kind of job a trace holds, as placement sees it: how many
// slots each member needs on one machine, how many members, its class,
// whether it may run on spot, and the labels it requires. Jobs of one shape
// fit the same machines.
type Shape struct {
	Slots          int               `json:"slots"`
	Members        int               `json:"members"`
	Class          jobs.Class        `json:"class"`
	Checkpointable bool              `json:"checkpointable"`
	Requires       map[string]string `json:"requires,omitempty"`
	// CPUs and Memory are what each member needs beyond its slots, where
	// some pool declares what its workers offer (else 0: they bind
	// nowhere).
	CPUs   float64 `json:"cpus,omitempty"`
	Memory int64   `json:"memory,omitempty"`
	// Jobs and SlotHours count the trace's jobs of this shape and what
	// they hold (every member, for their Duration).
	Jobs      int     `json:"jobs"`
	SlotHours float64 `json:"slot_hours"`
	// OnDemand and Spot are the largest machines (slots per worker) of
	// the on-demand and spot pools that can hold one of its members, with
	// the labels it requires and room for every member under the pool's
	// max_workers; 0 when no such pool exists.
	OnDemand int `json:"ondemand_machine,omitempty"`
	Spot     int `json:"spot_machine,omitempty"`
	// Labelled is whether some pool, fixed or elastic, carries every label
	// the shape requires: a job whose labels no worker carries waits for
	// ever, live and simulated.
	Labelled bool `json:"labelled"`
	// ElasticLabels is whether some elastic pool carries those labels: a
	// job whose labels only fixed pools carry runs on the quota whatever
	// its size.
	ElasticLabels bool `json:"elastic_labels"`
}

// TotalSlots is what one job of the shape holds with every member running.
func (s Shape) TotalSlots() int { return s.Slots * s.Members }

// elastic reports whether some elastic machine can run the shape: core
// work only on on-demand, after overflow (rule 7); burst work on
// on-demand, or on spot when it resumes from a checkpoint.
func (s Shape) elastic(overflow bool) bool {
	if s.Class == jobs.ClassCore {
		return overflow && s.OnDemand > 0
	}
	return s.OnDemand > 0 || (s.Checkpointable && s.Spot > 0)
}

// Shapes is where a trace's jobs can run on a set of pools: each elastic
// pool offers machines of its SlotsPerWorker, and the quota is counted in
// slots (the simulator makes one quota one worker; a quota per flavor is
// cut into its pool's machines, which the floor does not model). A job that no elastic machine can hold runs on the quota
// or nowhere, and so sets a floor under the quota: a plan below it leaves
// that job queued for ever, however cheap it looks.
type Shapes struct {
	// All is every shape of the trace, biggest first.
	All []Shape `json:"shapes"`
	// LargestOnDemand and LargestSpot are the biggest machines the
	// elastic pools offer, in slots.
	LargestOnDemand int `json:"largest_ondemand_machine"`
	LargestSpot     int `json:"largest_spot_machine"`
}

// shapeKey groups jobs; the labels are flattened so the key compares.
type shapeKey struct {
	slots, members int
	class          jobs.Class
	ckpt           bool
	labels         string
	cpus           float64
	memory         int64
}

// ShapesOf groups tr's jobs by shape and says which pools can hold each.
func ShapesOf(tr trace.Trace, pools []policy.Pool) Shapes {
	var sh Shapes
	for _, p := range pools {
		switch p.Kind {
		case policy.PoolOnDemand:
			sh.LargestOnDemand = max(sh.LargestOnDemand, machineOf(p))
		case policy.PoolSpot:
			sh.LargestSpot = max(sh.LargestSpot, machineOf(p))
		}
	}
	// CPUs and memory bind only where a pool declares what its workers
	// offer, as the simulator places them.
	cpus, memory := false, false
	for _, p := range pools {
		cpus, memory = cpus || p.CPUs > 0, memory || p.Memory > 0
	}
	at := map[shapeKey]int{}
	for _, j := range tr.Jobs {
		if !cpus {
			j.CPUs = 0
		}
		if !memory {
			j.Memory = 0
		}
		k := shapeKey{j.Slots, j.Members(), j.Class, j.Checkpointable, jobs.LabelsKey(j.Requires), j.CPUs, j.Memory}
		i, ok := at[k]
		if !ok {
			i = len(sh.All)
			at[k] = i
			sh.All = append(sh.All, shapeFor(j, pools))
		}
		sh.All[i].Jobs++
		sh.All[i].SlotHours += j.GPUs() * j.Duration.Hours()
	}
	slices.SortStableFunc(sh.All, func(a, b Shape) int {
		if c := cmp.Compare(b.TotalSlots(), a.TotalSlots()); c != 0 {
			return c
		}
		return cmp.Compare(b.Jobs, a.Jobs)
	})
	return sh
}

func shapeFor(j trace.Job, pools []policy.Pool) Shape {
	s := Shape{Slots: j.Slots, Members: j.Members(), Class: j.Class, Checkpointable: j.Checkpointable, Requires: j.Requires,
		CPUs: j.CPUs, Memory: j.Memory}
	if len(j.Requires) == 0 {
		s.Labelled = true
		s.ElasticLabels = slices.ContainsFunc(pools, func(p policy.Pool) bool { return p.Kind.Elastic() })
	}
	for _, p := range pools {
		if jobs.Carries(p.Labels, j.Requires) {
			s.Labelled = true
			s.ElasticLabels = s.ElasticLabels || p.Kind.Elastic()
		}
		if !p.Kind.Elastic() || !holds(p, s) {
			continue
		}
		if p.Kind == policy.PoolOnDemand {
			s.OnDemand = max(s.OnDemand, machineOf(p))
		} else {
			s.Spot = max(s.Spot, machineOf(p))
		}
	}
	return s
}

// holds reports whether elastic pool p can run a job of shape s: every
// member on a machine with room for it, the labels it requires and, where
// the pool declares them, its CPUs and memory, as many machines as the
// members need within MaxWorkers (members may share a machine with room
// for both).
func holds(p policy.Pool, s Shape) bool {
	size := machineOf(p)
	if size < s.Slots || !jobs.Carries(p.Labels, s.Requires) ||
		p.CPUs > 0 && p.CPUs < s.CPUs || p.Memory > 0 && p.Memory < s.Memory {
		return false
	}
	perMachine := size / s.Slots
	need := (s.Members + perMachine - 1) / perMachine
	return p.MaxWorkers <= 0 || need <= p.MaxWorkers
}

// machineOf is a pool's machine size in slots (one when unset, as the
// policy reads it).
func machineOf(p policy.Pool) int { return max(p.SlotsPerWorker, 1) }

// HeldBy counts the jobs of the shapes that elastic pool p's machines can
// hold, labels included, and the most slots one of them needs.
func (sh Shapes) HeldBy(p policy.Pool) (jobs, largest int) {
	for _, s := range sh.All {
		if holds(p, s) {
			jobs += s.Jobs
			largest = max(largest, s.TotalSlots())
		}
	}
	return jobs, largest
}

// QuotaOnly returns the shapes no elastic machine can hold, with core
// overflow on or off: the quota must run them. Shapes whose labels no
// pool carries are left out: nothing runs them (see Unlabelled).
func (sh Shapes) QuotaOnly(overflow bool) []Shape {
	var out []Shape
	for _, s := range sh.All {
		if s.Labelled && !s.elastic(overflow) {
			out = append(out, s)
		}
	}
	return out
}

// Floor is the smallest quota that can run every job no elastic machine
// can hold, with core overflow on or off, at high watermark high: a core
// job needs its slots free on the quota; a burst job is lent to the quota
// only while the lend keeps committed slots at or under the high
// watermark (rule 2), so it needs a quota whose ceiling holds it. A high
// of 0 or less asks only for the slots themselves, the physical floor the
// offline optimum respects.
func (sh Shapes) Floor(overflow bool, high float64) int {
	floor := 0
	for _, s := range sh.QuotaOnly(overflow) {
		need := s.TotalSlots()
		if s.Class != jobs.ClassCore && high > 0 {
			need = quotaUnder(need, high)
		}
		floor = max(floor, need)
	}
	return floor
}

// quotaUnder is the smallest quota q whose lending ceiling, the policy's
// floor(high x q), holds k slots.
func quotaUnder(k int, high float64) int {
	q := int(math.Ceil(float64(k)/high - 1e-9))
	for int(math.Floor(high*float64(q)+1e-9)) < k {
		q++
	}
	for q > k && int(math.Floor(high*float64(q-1)+1e-9)) >= k {
		q--
	}
	return max(q, k)
}

// QuotaOnlyByLabels is QuotaOnly(true) grouped by the labels the shapes
// require, in the order of their labels: advice on machine sizes is per
// label set, since big A100 machines do nothing for big T4 jobs.
func (sh Shapes) QuotaOnlyByLabels() [][]Shape {
	groups := map[string][]Shape{}
	var keys []string
	for _, s := range sh.QuotaOnly(true) {
		k := jobs.LabelsKey(s.Requires)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], s)
	}
	slices.Sort(keys)
	out := make([][]Shape, len(keys))
	for i, k := range keys {
		out[i] = groups[k]
	}
	return out
}

// Unlabelled returns the shapes whose required labels no pool carries.
func (sh Shapes) Unlabelled() []Shape {
	var out []Shape
	for _, s := range sh.All {
		if !s.Labelled {
			out = append(out, s)
		}
	}
	return out
}
