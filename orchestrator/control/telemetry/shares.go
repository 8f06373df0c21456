package telemetry

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ballastdev/ballast/orchestrator/model/events"
)

// TeamShare is one team's use of the fixed quota under shares, as the
// leader's capacity loop counts it each tick (orchestrator/model/shares Split
// of the slots running on fixed workers).
type TeamShare struct {
	Team string
	// Share is the team's slots (0 for a team running without one).
	Share int
	// Own, OnCommon and OnLent are the slots it uses within its share,
	// on common slots and on other teams' shares.
	Own, OnCommon, OnLent float64
	// LentTo is, by borrower, the slots of this team's share others use.
	LentTo map[string]float64
	// Idle is the share's slots nobody uses.
	Idle float64
	// OwnerWait is how long the team's oldest waiting core job has
	// waited while the team used less than its share, in seconds.
	OwnerWait float64
}

// Where a team's used slots are, the where label of ballast.share.used.
const (
	ShareOwn    = "own"
	ShareCommon = "common"
	ShareLent   = "lent"
)

// shareInstruments are the team share metrics: gauges fed by SetShares,
// counters by the share events Observe sees.
type shareInstruments struct {
	slots, used, lent, idle metric.Float64ObservableGauge
	ownerWait               metric.Float64ObservableGauge
	reclaims, admissions    metric.Int64Counter

	teams []TeamShare // the last SetShares, under Metrics.mu
}

func (m *Metrics) createShares(meter metric.Meter, ns string) error {
	var e [8]error
	c := &m.share
	c.slots, e[0] = meter.Float64ObservableGauge(ns+".share.slots",
		metric.WithUnit("{slot}"),
		metric.WithDescription("Each team's share of the fixed quota (shares.teams)."))
	c.used, e[1] = meter.Float64ObservableGauge(ns+".share.used",
		metric.WithUnit("{slot}"),
		metric.WithDescription("Fixed slots each team's jobs run on, by where: own (its share), common (no one's share) or lent (other teams' shares)."))
	c.lent, e[2] = meter.Float64ObservableGauge(ns+".share.lent",
		metric.WithUnit("{slot}"),
		metric.WithDescription("Slots of each team's share other teams use, by borrower (to)."))
	c.idle, e[3] = meter.Float64ObservableGauge(ns+".share.idle",
		metric.WithUnit("{slot}"),
		metric.WithDescription("Slots of each team's share nobody uses."))
	c.ownerWait, e[4] = meter.Float64ObservableGauge(ns+".share.owner_wait",
		metric.WithUnit("s"),
		metric.WithDescription("How long each team's oldest waiting core job has waited while the team used less than its share: the lateness of its guarantee."))
	c.reclaims, e[5] = meter.Int64Counter(ns+".share.reclaims",
		metric.WithUnit("{reclaim}"),
		metric.WithDescription("Running jobs stopped to give fixed slots back, by the team that lost them (team), the team that took them (owner) and the policy rule."))
	c.admissions, e[6] = meter.Int64Counter(ns+".share.admissions",
		metric.WithUnit("{job}"),
		metric.WithDescription("Held core jobs admitted to fixed capacity under shares, by team and by whose share (owner; empty for common slots)."))
	if errors.Join(e[:7]...) == nil {
		_, e[7] = meter.RegisterCallback(m.observeShares, c.slots, c.used, c.lent, c.idle, c.ownerWait)
	}
	return errors.Join(e[:]...)
}

// SetShares replaces the team shares the gauges report; the leader's
// capacity loop calls it every tick. ts is copied. An empty ts (shares
// off) reports no series.
func (m *Metrics) SetShares(ts []TeamShare) {
	if m == nil {
		return
	}
	ts = slices.Clone(ts)
	for i := range ts {
		ts[i].LentTo = maps.Clone(ts[i].LentTo)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.share.teams = ts
}

func (m *Metrics) observeShares(_ context.Context, o metric.Observer) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := &m.share
	for _, t := range c.teams {
		team := attribute.String("team", t.Team)
		o.ObserveFloat64(c.slots, float64(t.Share), metric.WithAttributes(team))
		for where, v := range map[string]float64{ShareOwn: t.Own, ShareCommon: t.OnCommon, ShareLent: t.OnLent} {
			o.ObserveFloat64(c.used, v, metric.WithAttributes(team, attribute.String("where", where)))
		}
		for to, v := range t.LentTo {
			o.ObserveFloat64(c.lent, v, metric.WithAttributes(team, attribute.String("to", to)))
		}
		o.ObserveFloat64(c.idle, t.Idle, metric.WithAttributes(team))
		o.ObserveFloat64(c.ownerWait, t.OwnerWait, metric.WithAttributes(team))
	}
	return nil
}

// observeShare counts a share event: a reclaim, or an admission under
// shares. It reports whether e was one.
func (m *Metrics) observeShare(e events.Event) bool {
	s, ok := events.ParseShare(e)
	if !ok {
		return false
	}
	ctx := context.Background()
	team, owner := attribute.String("team", s.Team), attribute.String("owner", s.Owner)
	switch {
	case e.Type == events.TypeJobReclaimed:
		m.share.reclaims.Add(ctx, 1, metric.WithAttributes(team, owner, attribute.String("rule", strconv.Itoa(s.Rule))))
	case e.Type == events.TypeJobMoved && s.Action == "admit":
		m.share.admissions.Add(ctx, 1, metric.WithAttributes(team, owner))
	}
	return true
}
