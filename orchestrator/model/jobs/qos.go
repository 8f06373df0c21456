package jobs

import (
	"fmt"
	"maps"
	"slices"
	"sort"
)

// Default QoS groups by placement: fixed-quota work and elastic work never
// share a group, and a burst job lent to a fixed worker stays in the burst
// group, so lending never takes more of the fixed machine than that group's
// share.
const (
	DefaultCoreGroup  = "core"
	DefaultBurstGroup = "burst"
)

// QoS is the isolation policy: named groups with per-worker limits, and
// which group each job lands in.
type QoS struct {
	// Groups are the QoS groups by name. A group's limits hold on each
	// worker for all of its jobs together.
	Groups map[string]Limits `yaml:"groups,omitempty" json:"groups,omitempty"`
	// Core and Burst are the groups of core and burst jobs (default "core"
	// and "burst"); Loan is the group of a burst job lent to a fixed worker
	// (default: Burst).
	Core  string `yaml:"core,omitempty" json:"core,omitempty"`
	Burst string `yaml:"burst,omitempty" json:"burst,omitempty"`
	Loan  string `yaml:"loan,omitempty" json:"loan,omitempty"`
	// Teams puts every job of a team in a group, unless its template names
	// one.
	Teams map[string]string `yaml:"teams,omitempty" json:"teams,omitempty"`
	// NetDevice is the network interface whose egress groups' limits
	// shape (default: the interface of the default route).
	NetDevice string `yaml:"net_device,omitempty" json:"net_device,omitempty"`
}

// WithDefaults fills in the placement groups.
func (q QoS) WithDefaults() QoS {
	if q.Core == "" {
		q.Core = DefaultCoreGroup
	}
	if q.Burst == "" {
		q.Burst = DefaultBurstGroup
	}
	if q.Loan == "" {
		q.Loan = q.Burst
	}
	return q
}

// Group is the group a job runs in: its template's (Spec.QoS), else its
// team's, else its placement's: core, burst, or loan for a burst job on a
// fixed worker. Pure: the worker calls it with what it knows of itself.
func (q QoS) Group(s Spec, fixedWorker bool) string {
	switch {
	case s.QoS != "":
		return s.QoS
	case q.Teams[s.Team] != "":
		return q.Teams[s.Team]
	case s.Class == ClassCore:
		return q.Core
	case fixedWorker:
		return q.Loan
	}
	return q.Burst
}

// GroupNames lists the groups, sorted.
func (q QoS) GroupNames() []string {
	names := make([]string, 0, len(q.Groups))
	for n := range q.Groups {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Validate checks a defaulted policy against the templates (by name) and
// returns every problem as a *ValidationError, fields under "qos" and
// "templates.NAME".
func (q QoS) Validate(templates map[string]Template) error {
	var ps problems
	for _, name := range q.GroupNames() {
		f := "qos.groups." + name
		if !nameRE.MatchString(name) {
			ps.add(f, "a group name uses lower-case letters, digits, '.', '_' or '-' (at most 63)")
		}
		q.Groups[name].validate(f, false, &ps)
	}
	known := func(field, group string) {
		if _, ok := q.Groups[group]; !ok {
			ps.add(field, fmt.Sprintf("%q is not a group under qos.groups (%s)", group, q.knownList()))
		}
	}
	// The placement defaults may name groups nobody declared: their jobs
	// then run unlimited, with their usage still measured. A name the
	// operator wrote must exist.
	for _, p := range []struct{ field, v, def string }{
		{"qos.core", q.Core, DefaultCoreGroup}, {"qos.burst", q.Burst, DefaultBurstGroup}, {"qos.loan", q.Loan, q.Burst},
	} {
		if p.v != p.def {
			known(p.field, p.v)
		}
	}
	for _, team := range slices.Sorted(maps.Keys(q.Teams)) {
		known("qos.teams."+team, q.Teams[team])
	}
	for _, name := range slices.Sorted(maps.Keys(templates)) {
		t := templates[name]
		f := "templates." + name
		if t.QoS != "" {
			known(f+".qos", t.QoS)
		}
		if t.Limits == nil {
			continue
		}
		t.Limits.validate(f+".limits", true, &ps)
		for _, g := range q.groupsOf(t) {
			t.Limits.within(f+".limits", g, q.Groups[g], &ps)
		}
	}
	return ps.err()
}

// groupsOf lists the groups a template's jobs can land in, as far as config
// tells: its own, else its class's (and, for burst, the loan group; a team
// named at submission is not known here).
func (q QoS) groupsOf(t Template) []string {
	t = t.WithDefaults()
	var gs []string
	switch {
	case t.QoS != "":
		gs = []string{t.QoS}
	case t.Team != "" && q.Teams[t.Team] != "":
		gs = []string{q.Teams[t.Team]}
	case t.Class == ClassCore:
		gs = []string{q.Core}
	default:
		gs = []string{q.Burst, q.Loan}
	}
	out := gs[:0]
	for _, g := range gs {
		if _, ok := q.Groups[g]; ok {
			out = append(out, g)
		}
	}
	return out
}

func (q QoS) knownList() string {
	if len(q.Groups) == 0 {
		return "none is declared"
	}
	return fmt.Sprintf("known: %v", q.GroupNames())
}
