package sim

import (
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/shares"
)

// teamModel is what the run keeps for team shares (policy.Config.Shares):
// each team's slots on the quota now, their usage decayed over the
// shares' half-life (the tie-break of fair borrowing, handed to the
// policy before every Decide, as the live controller does) and what each
// team went through. A run without shares has none, and nothing of it
// touches the model.
type teamModel struct {
	cfg   shares.Config
	decay shares.Decayed
	// fixed is the slots each team's tasks hold on fixed workers now,
	// since at; hours integrates it.
	fixed map[string]float64
	at    time.Duration
	stats map[string]*teamStats
}

// teamStats is what one team went through.
type teamStats struct {
	jobs                         int
	waits                        []time.Duration
	reclaimed, reclaimedFor, reb int
	lost, maxLost, hours         float64
}

// TeamResult is what one team went through under team shares
// (Options.Config.Shares); Result.Teams has one per team with a share, in
// the shares' order, then one per other team named by the trace.
type TeamResult struct {
	Team string
	// Share is the team's share of the quota in slots, 0 for a team
	// without one.
	Share int
	// Jobs counts the team's trace jobs that arrived.
	Jobs int
	// InShareWait are the waits (submit to first start) of the team's
	// jobs that arrived while its demand (its work on the quota, queued
	// for it or held for rule 9, and the job itself) was within its
	// share: the waits its guarantee is about.
	InShareWait Percentiles
	// Reclaimed counts the team's jobs stopped by reclaims, ReclaimedFor
	// the reclaims the policy made for the team as owner (Action.Owner),
	// and Rebalanced its jobs stopped by rebalancing between borrowers.
	Reclaimed, ReclaimedFor, Rebalanced int
	// LostWork is the slot-hours of work its jobs lost to stops (of any
	// reason), MaxLostPerStop the most one stop lost.
	LostWork, MaxLostPerStop float64
	// FixedSlotHours is the slot time its jobs held fixed slots, winding
	// down included.
	FixedSlotHours float64
}

func newTeamModel(cfg policy.Config) *teamModel {
	if !cfg.Shares.On() {
		return nil
	}
	m := &teamModel{cfg: cfg.Shares, fixed: map[string]float64{}, stats: map[string]*teamStats{}}
	m.decay.HalfLife = cfg.Shares.HalfLife
	for _, t := range cfg.Shares.Teams {
		m.stats[t.Name] = &teamStats{}
	}
	return m
}

func (m *teamModel) team(name string) *teamStats {
	st, ok := m.stats[name]
	if !ok {
		st = &teamStats{}
		m.stats[name] = st
	}
	return st
}

// arrived counts a new task of its team and marks it in-share when the
// team's demand, with it, is within the team's share.
func (m *teamModel) arrived(s *sim, ti int32) {
	t := &s.tasks[ti]
	m.team(t.team).jobs++
	share, _ := m.cfg.Team(t.team)
	demand := float64(t.total())
	for i := range s.tasks {
		if o := &s.tasks[i]; int32(i) != ti && o.team == t.team && m.onQuota(s, o) {
			demand += float64(o.total())
		}
	}
	t.inShare = demand <= float64(share.Slots)
}

// onQuota reports whether task o runs on fixed workers, or waits for them
// (held for rule 9, admitted to core, lent): the team's demand on its
// share.
func (m *teamModel) onQuota(s *sim, o *task) bool {
	switch o.state {
	case tsQueued:
		return o.queue == qCore || o.queue == qLoan || o.queue == qHeld
	case tsRunning, tsLeaving:
		return !s.pools[s.workers[o.worker].pool].elastic
	}
	return false
}

// use records that task t takes (k > 0) or gives back (k < 0) k fixed
// slots now; the decayed usage and the slot-hours count what was held
// until now first.
func (m *teamModel) use(s *sim, t *task, k float64) {
	m.hoursTo(s)
	m.advance(s)
	m.fixed[t.team] += k
}

// advance brings the decayed usage and the slot-hours up to now. The
// slot-hours are summed only where the use changes (use, results), so
// that how often the run decides cannot round them differently.
func (m *teamModel) advance(s *sim) {
	m.decay.Add(s.at(s.now), m.fixed)
}

// hoursTo adds the slot-hours held since the last change up to now.
func (m *teamModel) hoursTo(s *sim) {
	if dt := (s.now - m.at).Hours(); dt > 0 {
		for team, k := range m.fixed {
			m.team(team).hours += k * dt
		}
	}
	m.at = s.now
}

// tick hands the policy the decayed usage before a Decide, and with
// rebalancing on wakes the run when a running job on the quota has run
// MinRun: rebalancing may stop it from then on, a timer the policy reads.
func (m *teamModel) tick(s *sim) {
	m.advance(s)
	s.ix.SetTeamUsage(m.decay.Usage())
	if r := m.cfg.Rebalance; r.Enabled && r.MinRun > 0 {
		for _, wi := range s.fixedWs {
			for _, ti := range s.workers[wi].tasks {
				if t := &s.tasks[ti]; t.state == tsRunning {
					s.wakeAt(t.startedAt + r.MinRun)
				}
			}
		}
	}
}

// started records the wait of a team's job at its first start.
func (m *teamModel) started(t *task, wait time.Duration) {
	if t.inShare {
		st := m.team(t.team)
		st.waits = append(st.waits, wait)
	}
}

// stopped records a stop of one of the team's jobs and the slot time it
// lost.
func (m *teamModel) stopped(t *task, r stopReason, lost time.Duration) {
	st := m.team(t.team)
	if r == stopReclaim {
		st.reclaimed++
	}
	st.lost += lost.Hours()
	st.maxLost = max(st.maxLost, lost.Hours())
}

// reclaimed records a reclaim made for an owner, and a stop by
// rebalancing on the job itself, which the policy reads back.
func (m *teamModel) reclaimed(t *task, a policy.Action) {
	if rebalancing(a) {
		t.rebalanced++
		m.team(t.team).reb++
		return
	}
	if a.Owner != "" {
		m.team(a.Owner).reclaimedFor++
	}
}

// rebalancing reports whether a reclaim is rule 9's rebalancing between
// borrowers rather than a reclaim for an owner (Action.Rebalance).
func rebalancing(a policy.Action) bool {
	return a.Kind == policy.Reclaim && a.Rebalance
}

// results lists every team's figures.
func (m *teamModel) results(s *sim) []TeamResult {
	m.hoursTo(s)
	var names []string
	for _, t := range m.cfg.Teams {
		names = append(names, t.Name)
	}
	var others []string
	for name := range m.stats {
		if _, ok := m.cfg.Team(name); !ok {
			others = append(others, name)
		}
	}
	slices.Sort(others)
	var out []TeamResult
	for _, name := range append(names, others...) {
		st := m.team(name)
		share, _ := m.cfg.Team(name)
		out = append(out, TeamResult{
			Team: name, Share: share.Slots, Jobs: st.jobs, InShareWait: percentiles(slices.Clone(st.waits)),
			Reclaimed: st.reclaimed, ReclaimedFor: st.reclaimedFor, Rebalanced: st.reb,
			LostWork: st.lost, MaxLostPerStop: st.maxLost, FixedSlotHours: st.hours,
		})
	}
	return out
}
