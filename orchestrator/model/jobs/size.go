package jobs

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Limits on a job's size. A worker of more slots than MaxSlots is allowed; a
// single job of more is refused, because no machine Ballast places on holds
// that many GPUs and a typo (80 for 8) would otherwise wait for ever.
const (
	// MaxSlots bounds slots and max_slots: the slots of one member.
	MaxSlots = 64
	// MaxReplicas bounds the members of one gang.
	MaxReplicas = 256
	// MaxRequires bounds the labels a template may require.
	MaxRequires = 16
)

// Size is how much of one worker each member of a job holds, and how many
// members start together. The zero Size is one slot, one member, nothing
// else accounted: every job before sizes existed.
//
// A job of Slots k starts only on a worker with k free slots; on a GPU
// worker the slots are GPUs and the job is bound to k of its own. A gang
// (Replicas n > 1) is n members of Slots each, started together on workers
// of one region, stopped and requeued together, billed as n × k slots.
type Size struct {
	// Slots is how many of a worker's slots each member holds; 0 means 1.
	Slots int `yaml:"slots,omitempty" json:"slots,omitempty"`
	// Replicas is how many members run together; 0 means 1.
	Replicas int `yaml:"replicas,omitempty" json:"replicas,omitempty"`
	// CPUs and Memory are what each member needs beyond its slots, on
	// workers that declare theirs; 0 accounts nothing. They decide
	// placement only: the cgroup limits are the template's limits.
	CPUs   float64  `yaml:"cpus,omitempty" json:"cpus,omitempty"`
	Memory ByteSize `yaml:"memory,omitempty" json:"memory,omitempty"`
	// Requires are labels every worker of the job must report with these
	// values, such as gpu_model: A100-80GB, or one of several values
	// (gpu_model: [V100M16, V100M32]; see AnyOf).
	Requires Requires `yaml:"requires,omitempty" json:"requires,omitempty"`
	// GPUShare, between 0 and 1 exclusive, asks for that share of one GPU
	// instead of a whole one; 0 asks for no share. See share.go.
	GPUShare float64 `yaml:"gpu_share,omitempty" json:"gpu_share,omitempty"`
}

// SlotCount is the slots of one member, at least 1.
func (z Size) SlotCount() int { return max(z.Slots, 1) }

// Members is how many members the job has, at least 1.
func (z Size) Members() int { return max(z.Replicas, 1) }

// TotalSlots is what the job holds while it runs: members × slots. It is
// what it is billed for.
func (z Size) TotalSlots() int { return z.SlotCount() * z.Members() }

// Sized reports whether the job needs placing: it holds more than one slot,
// has several members, or needs resources or labels a worker must be chosen
// for. An unsized job is one slot that any worker of its queue may take.
func (z Size) Sized() bool {
	return z.Slots > 1 || z.Replicas > 1 || z.CPUs > 0 || z.Memory > 0 || len(z.Requires) > 0
}

// Gang reports whether the job has more than one member.
func (z Size) Gang() bool { return z.Replicas > 1 }

// validate checks the size declared at field ("templates.train").
func (z Size) validate(field string, maxSlots int, ps *problems) {
	if z.Slots < 0 || z.Slots > MaxSlots {
		ps.add(field+".slots", fmt.Sprintf("is %d; give 1 to %d slots per member (one slot is one GPU on GPU workers)", z.Slots, MaxSlots))
	}
	if maxSlots > 0 && z.Slots > maxSlots {
		ps.add(field+".slots", fmt.Sprintf("is %d, above max_slots %d", z.Slots, maxSlots))
	}
	if z.Replicas < 0 || z.Replicas > MaxReplicas {
		ps.add(field+".replicas", fmt.Sprintf("is %d; give 1 to %d members", z.Replicas, MaxReplicas))
	}
	if z.CPUs < 0 || math.IsNaN(z.CPUs) || math.IsInf(z.CPUs, 0) || z.CPUs > 4096 {
		ps.add(field+".cpus", fmt.Sprintf("is %v; give the cores one member needs, such as 4 or 0.5", z.CPUs))
	}
	if z.Memory < 0 {
		ps.add(field+".memory", "is negative; write it like 16GiB")
	}
	z.validateShare(field+".gpu_share", ps)
	if len(z.Requires) > MaxRequires {
		ps.add(field+".requires", fmt.Sprintf("%d labels; the limit is %d", len(z.Requires), MaxRequires))
	}
	keys := make([]string, 0, len(z.Requires))
	for k := range z.Requires {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if msg := requireProblem(k, z.Requires[k]); msg != "" {
			ps.add(field+".requires."+k, msg)
		}
	}
}

// LabelProblem says what is wrong with a worker label (a pool's, or one
// value a job requires), "" when nothing is.
func LabelProblem(k, v string) string {
	switch {
	case !labelKeyRE.MatchString(k):
		return "a label key uses letters, digits, '_', '.', '/' or '-' (at most 63)"
	case v == "" || len(v) > MaxLabelValueBytes:
		return fmt.Sprintf("give the value the workers report, 1 to %d bytes", MaxLabelValueBytes)
	}
	if msg := CheckText(v, NoControls); msg != "" {
		return "the value " + msg
	}
	if strings.Contains(v, AnyOf) {
		return fmt.Sprintf("a value may not hold %q, which separates the values a requirement accepts; list them instead", AnyOf)
	}
	return ""
}

// clone returns a copy that shares no map with z.
func (z Size) clone() Size {
	z.Requires = copyLabels(z.Requires)
	return z
}
