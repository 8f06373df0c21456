package insight

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ballastdev/ballast/internal/timespan"
	"github.com/ballastdev/ballast/orchestrator/model/cost"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/queues/usage"
)

// Ledger gathers the cost ledger of [from, until) from the store. Problems
// name what had to be left out (attempts on pools no longer configured,
// elastic attempts whose worker left no life record); what is left is
// consistent, so cost.Compute prices it.
func (s Source) Ledger(ctx context.Context, from, until time.Time) (cost.Ledger, []string, error) {
	// The active jobs first: an attempt ending meanwhile is then found
	// ended or running, never neither (usage.Store.Usage).
	active, err := s.Store.ActiveJobs(ctx)
	if err != nil {
		return cost.Ledger{}, nil, err
	}
	attempts, err := s.Accounting.Usage(ctx, active, from, until)
	if err != nil {
		return cost.Ledger{}, nil, err
	}
	lives, err := s.Accounting.WorkerLives(ctx, from, until)
	if err != nil {
		return cost.Ledger{}, nil, err
	}
	started, err := s.Store.Started(ctx)
	if err != nil {
		return cost.Ledger{}, nil, err
	}
	l, problems := s.LedgerOf(from, until, started, attempts, lives)
	return l, problems, nil
}

// Cost prices [from, until): Ledger, then cost.Compute.
func (s Source) Cost(ctx context.Context, from, until time.Time) (cost.Report, []string, error) {
	l, problems, err := s.Ledger(ctx, from, until)
	if err != nil {
		return cost.Report{}, problems, err
	}
	r, err := cost.Compute(l)
	if err != nil {
		// LedgerOf hands over a consistent ledger; a refusal here means
		// records the reconciliation does not cover, a fault of the data
		// rather than of the caller's window.
		return cost.Report{}, problems, fmt.Errorf("insight: the records of %s → %s cannot be priced: %v",
			from.Format(time.RFC3339), until.Format(time.RFC3339), err)
	}
	return r, problems, nil
}

// LedgerOf builds the ledger of [from, until) from usage entries and worker
// lives already read, and started, when Ballast started (Store.Started). It
// is pure, so the rules below are tested directly.
//
//   - The window is priced from the first moment Ballast has records for
//     (pricedFrom) when that is later than from: the quota is not paid for
//     a time before Ballast existed, and its idle share is taken over the
//     same span. The ledger's From says where pricing started.
//   - Every fixed pool with a quota is a Quota at the pool's price.
//   - Every life of an elastic worker is a WorkerSpan; fixed workers are
//     paid through the quota.
//   - A fixed pool whose attempts at some instant outnumber its quota (its
//     workers hold more slots than the config says) is priced as if the
//     quota were that peak, and a problem says so: the slots existed.
//   - Every attempt is a one-slot Usage on the pool its worker belonged to.
//     An elastic attempt is clipped to the life of its worker: the two are
//     stamped by different writes (claim and heartbeat, finish and
//     deregister) and must not disagree by a few milliseconds into a
//     worker that did not exist, which the ledger rightly refuses.
func (s Source) LedgerOf(from, until, started time.Time, attempts []usage.AttemptUsage, lives []usage.WorkerLife) (cost.Ledger, []string) {
	from = pricedFrom(from, until, started, attempts, lives)
	l := cost.Ledger{Pools: s.Pools, From: from, Until: until, Location: s.loc()}
	for _, p := range s.Pools {
		if p.Kind == policy.PoolFixed && s.Quota[p.Name] > 0 {
			l.Quotas = append(l.Quotas, cost.Quota{Pool: p.Name, Slots: s.Quota[p.Name], PricePerSlotHour: p.PricePerSlotHour})
		}
	}
	byWorker := map[string][]usage.WorkerLife{}
	for _, w := range lives {
		p, ok := s.pool(w.Pool)
		if !ok || p.Kind == policy.PoolFixed {
			continue
		}
		byWorker[w.ID] = append(byWorker[w.ID], w)
		// A worker ID may come back (a restarted process); its start
		// makes each life's span ID unique.
		l.Workers = append(l.Workers, cost.WorkerSpan{ID: fmt.Sprintf("%s@%d", w.ID, w.Start.UnixMilli()),
			Pool: w.Pool, Slots: w.Slots, Start: w.Start, End: w.End})
	}
	// A job's attempts must agree on its team and template; a record
	// written before these were stamped on it has them empty, so the
	// first non-empty value seen names the job.
	names := map[string][2]string{}
	for _, u := range attempts {
		n := names[u.JobID]
		if n[0] == "" {
			n[0] = u.Team
		}
		if n[1] == "" {
			n[1] = u.Template
		}
		names[u.JobID] = n
	}
	var unknownPool, noLife, noQuota int
	for _, u := range attempts {
		p, ok := s.pool(u.Pool)
		switch {
		case !ok:
			unknownPool++
			continue
		case p.Kind == policy.PoolFixed && s.Quota[p.Name] <= 0:
			noQuota++
			continue
		}
		start, end := u.Start, u.End
		if p.Kind.Elastic() {
			life, ok := lifeAt(byWorker[u.Worker], start)
			if !ok {
				noLife++
				continue
			}
			start = timespan.Later(start, life.Start)
			if !life.End.IsZero() && (end.IsZero() || end.After(life.End)) {
				end = life.End
			}
		}
		if !end.IsZero() && !end.After(start) {
			continue // nothing of it is left inside its worker's life
		}
		lost := u.Lost
		if !end.IsZero() && lost > end.Sub(start) {
			lost = end.Sub(start)
		}
		n := names[u.JobID]
		l.Usage = append(l.Usage, cost.Usage{JobID: u.JobID, Team: n[0], Template: n[1], Pool: u.Pool,
			Slots: max(u.Slots, 1), Share: u.Share, Start: start, End: end, LostWork: lost})
	}
	var problems []string
	for i, q := range l.Quotas {
		if peak := peakUse(l.Usage, q.Pool, from, until); peak > q.Slots {
			problems = append(problems, fmt.Sprintf("fixed pool %s held %d slots at once, more than its quota of %d: "+
				"priced as if the quota were %d; set pools.%s.slots to what its workers hold", q.Pool, peak, q.Slots, peak, q.Pool))
			l.Quotas[i].Slots = peak
		}
	}
	if unknownPool > 0 {
		problems = append(problems, fmt.Sprintf("%d attempts ran on pools that are not configured (or before workers reported their pool) and are not priced", unknownPool))
	}
	if noQuota > 0 {
		problems = append(problems, fmt.Sprintf("%d attempts ran on fixed pools without a quota and are not priced: give those pools slots", noQuota))
	}
	if noLife > 0 {
		problems = append(problems, fmt.Sprintf("%d elastic attempts ran on workers with no life record (started before this version, or trimmed) and are not priced", noLife))
	}
	return l, problems
}

// pricedFrom is where the window [from, until) starts being priced: the
// first moment Ballast has records for, when that is inside the window.
// That moment is when a controller first led (started), or the earliest
// record read if one is older: records written before the start was kept
// (an install upgraded to this version) are still priced. Without a
// recorded start (no controller has led this store yet) the whole window
// is priced, as nothing says when Ballast began.
func pricedFrom(from, until, started time.Time, attempts []usage.AttemptUsage, lives []usage.WorkerLife) time.Time {
	if started.IsZero() {
		return from
	}
	first := started
	for _, u := range attempts {
		for _, t := range []time.Time{u.Queued, u.Start} {
			if !t.IsZero() {
				first = timespan.Earlier(first, t)
			}
		}
	}
	for _, w := range lives {
		if !w.Start.IsZero() {
			first = timespan.Earlier(first, w.Start)
		}
	}
	return timespan.Earlier(timespan.Later(from, first), until)
}

// peakUse is the most attempts on pool at one instant of [from, until); an
// attempt still running counts up to until.
func peakUse(attempts []cost.Usage, pool string, from, until time.Time) int {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, u := range attempts {
		if u.Pool != pool {
			continue
		}
		end := u.End
		if end.IsZero() || end.After(until) {
			end = until
		}
		start := timespan.Later(u.Start, from)
		if !start.Before(end) {
			continue
		}
		// In thousandths, so attempts sharing a GPU fill one slot.
		edges = append(edges, edge{start, u.Milli()}, edge{end, -u.Milli()})
	}
	// Ends before starts at the same instant: attempts are half-open.
	slices.SortFunc(edges, func(a, b edge) int { return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.delta, b.delta)) })
	peak, n := 0, 0
	for _, e := range edges {
		n += e.delta
		peak = max(peak, n)
	}
	return jobs.WholeGPUs(int64(peak))
}

// lifeSlack is how far an attempt's start may precede its worker's life
// and still be put in it: the two are stamped by different writes.
const lifeSlack = time.Minute

// lifeAt is the life among ls that t falls in: the latest one started by t
// and not ended by then, or failing that the first one starting within
// lifeSlack after t.
func lifeAt(ls []usage.WorkerLife, t time.Time) (usage.WorkerLife, bool) {
	var best usage.WorkerLife
	found := false
	for _, l := range ls {
		if l.Start.After(t) || (!l.End.IsZero() && !t.Before(l.End)) {
			continue
		}
		if !found || l.Start.After(best.Start) {
			best, found = l, true
		}
	}
	if found {
		return best, true
	}
	for _, l := range ls {
		if l.Start.After(t) && !l.Start.After(t.Add(lifeSlack)) && (!found || l.Start.Before(best.Start)) {
			best, found = l, true
		}
	}
	return best, found
}

// CostViewOf is the dashboard's summary of a report.
func CostViewOf(r cost.Report) CostView {
	v := CostView{From: r.From, Until: r.Until, Total: r.Total.PaidCost, Fixed: r.Total.FixedCost,
		Elastic: r.Total.ElasticCost, Idle: r.Total.IdleCost, LostWork: r.Total.LostCost, Premium: r.Total.Premium,
		Pools: []PoolCost{}, Teams: []NamedCost{}}
	for _, p := range r.Pools {
		v.Pools = append(v.Pools, PoolCost{Pool: p.Pool, Kind: string(p.Kind), Paid: p.PaidCost, Used: p.Cost,
			Idle: p.IdleCost, IdleShare: p.IdleShare})
	}
	for _, t := range r.Teams {
		name := t.Name
		if name == "" {
			name = NoTeam
		}
		v.Teams = append(v.Teams, NamedCost{Name: name, Cost: t.Cost, SlotHours: t.SlotHours, LostCost: t.LostCost, Premium: t.Premium})
	}
	return v
}

// NoTeam names the jobs submitted without a team.
const NoTeam = "(none)"
