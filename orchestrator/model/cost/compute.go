package cost

import (
	"cmp"
	"slices"
	"sort"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// Compute prices the ledger's window: what each pool was paid and how much
// of it was used, what each job, team, template and day was charged, and
// the totals. See the package documentation for the rules. The error, a
// *jobs.ValidationError, names every bad entry of the ledger.
func Compute(l Ledger) (Report, error) {
	b, err := check(l)
	if err != nil {
		return Report{}, err
	}
	return b.report(), nil
}

// tally accumulates the report's rows by name while the book is walked.
type tally struct {
	pools     map[string]*PoolRow
	days      map[string]*DayRow
	jobs      map[string]*JobRow
	teams     map[string]*GroupRow
	templates map[string]*GroupRow
}

func (b *book) report() Report {
	r := Report{From: b.from, Until: b.until, Location: b.loc}
	t := tally{
		pools:     make(map[string]*PoolRow, len(b.pools)),
		days:      make(map[string]*DayRow),
		jobs:      make(map[string]*JobRow),
		teams:     make(map[string]*GroupRow),
		templates: make(map[string]*GroupRow),
	}
	for name, pl := range b.pools {
		t.pools[name] = &PoolRow{Pool: name, Kind: pl.Kind}
	}
	splitDays(b.from, b.until, b.loc, func(day string, _ time.Duration) {
		if t.days[day] == nil {
			start, _ := time.ParseInLocation(dayLayout, day, b.loc)
			t.days[day] = &DayRow{Day: day, Start: start}
		}
	})

	r.Fixed.PricePerSlotHour = b.fixedPrice()
	b.payQuotas(&t, &r.Fixed)
	b.payWorkers(&t)
	b.charge(&t, r.Fixed.PricePerSlotHour)

	r.Pools = sorted(t.pools)
	for i := range r.Pools {
		p := &r.Pools[i]
		p.Paid.settle(p.Figures)
		p.Shares = shares(p.SlotHours, p.PaidSlotHours)
		r.Total.Figures.add(p.Figures)
		r.Total.Paid.add(p.Paid)
		if p.Kind == policy.PoolFixed {
			r.Fixed.Figures.add(p.Figures)
			r.Fixed.Paid.add(p.Paid)
			r.Total.FixedCost += p.PaidCost
		} else {
			r.Total.ElasticCost += p.PaidCost
		}
	}
	r.Fixed.Shares = shares(r.Fixed.SlotHours, r.Fixed.PaidSlotHours)
	r.Total.Shares = shares(r.Total.SlotHours, r.Total.PaidSlotHours)
	r.Days = sorted(t.days)
	for i := range r.Days {
		r.Days[i].Paid.settle(r.Days[i].Figures)
	}
	r.Jobs = sorted(t.jobs)
	r.Teams = sorted(t.teams)
	r.Templates = sorted(t.templates)
	return r
}

// fixedPrice is the quotas' cost per slot-hour. Every quota spans the
// whole window, so it is their slot-weighted price, which stays defined
// for an empty window.
func (b *book) fixedPrice() float64 {
	slots, cost := 0, 0.0
	for _, q := range b.quotas {
		slots += q.Slots
		cost += float64(q.Slots) * q.PricePerSlotHour
	}
	if slots == 0 {
		return 0
	}
	return cost / float64(slots)
}

// payQuotas adds each quota's cost over the window to its pool and days.
func (b *book) payQuotas(t *tally, fixed *FixedSummary) {
	quotas := make([]Quota, 0, len(b.quotas))
	for _, q := range b.quotas {
		quotas = append(quotas, q)
	}
	slices.SortFunc(quotas, func(x, y Quota) int { return cmp.Compare(x.Pool, y.Pool) })
	for _, q := range quotas {
		fixed.Slots += q.Slots
		pool := t.pools[q.Pool]
		splitDays(b.from, b.until, b.loc, func(day string, d time.Duration) {
			sh := float64(q.Slots) * d.Hours()
			paid := Paid{PaidSlotHours: sh, PaidCost: sh * q.PricePerSlotHour}
			pool.Paid.add(paid)
			t.days[day].Paid.add(paid)
		})
	}
}

// payWorkers adds each elastic worker's billed time in the window to its
// pool and days.
func (b *book) payWorkers(t *tally) {
	ws := slices.Clone(b.workers)
	// A fixed order makes the float sums, and so the report, independent
	// of the ledger's order.
	slices.SortFunc(ws, func(x, y worker) int {
		return cmp.Or(x.span.Start.Compare(y.span.Start), x.end.Compare(y.end),
			cmp.Compare(x.pool.Name, y.pool.Name), cmp.Compare(x.span.ID, y.span.ID), cmp.Compare(x.slots, y.slots))
	})
	for _, w := range ws {
		pool := t.pools[w.pool.Name]
		if s, e, ok := clip(w.span.Start, w.end, b.from, b.until); ok {
			pool.WorkerHours += e.Sub(s).Hours()
		}
		s, e, ok := clip(w.span.Start, billedEnd(w.pool, w.span.Start, w.end), b.from, b.until)
		if !ok {
			continue
		}
		splitDays(s, e, b.loc, func(day string, d time.Duration) {
			sh := float64(w.slots) * d.Hours()
			paid := Paid{PaidSlotHours: sh, PaidCost: sh * w.pool.PricePerSlotHour}
			pool.Paid.add(paid)
			pool.BilledWorkerHours += d.Hours()
			t.days[day].Paid.add(paid)
		})
	}
}

// charge adds each attempt's slot time in the window, at its pool's price,
// to its pool, job, team, template and days.
func (b *book) charge(t *tally, fixedPrice float64) {
	as := slices.Clone(b.attempts)
	slices.SortFunc(as, func(x, y attempt) int {
		return cmp.Or(x.u.Start.Compare(y.u.Start), x.end.Compare(y.end), cmp.Compare(x.u.Pool, y.u.Pool),
			cmp.Compare(x.u.JobID, y.u.JobID), cmp.Compare(x.u.Slots, y.u.Slots), cmp.Compare(x.u.Share, y.u.Share),
			cmp.Compare(x.u.LostWork, y.u.LostWork))
	})
	for _, a := range as {
		s, e, ok := clip(a.u.Start, a.end, b.from, b.until)
		if !ok {
			continue
		}
		price, premium := b.quotas[a.pool.Name].PricePerSlotHour, 0.0
		if a.pool.Kind.Elastic() {
			price = a.pool.PricePerSlotHour
			if len(b.quotas) > 0 {
				premium = price - fixedPrice
			}
		}
		slots := a.u.gpus()
		var f Figures
		splitDays(s, e, b.loc, func(day string, d time.Duration) {
			sh := slots * d.Hours()
			g := Figures{SlotHours: sh, Cost: sh * price, Premium: sh * premium}
			t.days[day].Figures.add(g)
			f.add(g)
		})
		if ls, le, ok := clip(a.end.Add(-a.u.LostWork), a.end, b.from, b.until); ok {
			splitDays(ls, le, b.loc, func(day string, d time.Duration) {
				sh := slots * d.Hours()
				g := Figures{LostSlotHours: sh, LostCost: sh * price}
				t.days[day].Figures.add(g)
				f.add(g)
			})
		}
		t.pools[a.pool.Name].Figures.add(f)
		job := t.jobs[a.u.JobID]
		if job == nil {
			job = &JobRow{JobID: a.u.JobID, Team: a.u.Team, Template: a.u.Template}
			t.jobs[a.u.JobID] = job
		}
		job.Attempts++
		job.Figures.add(f)
		group(t.teams, a.u.Team).add(f)
		group(t.templates, a.u.Template).add(f)
	}
}

func group(m map[string]*GroupRow, name string) *Figures {
	g := m[name]
	if g == nil {
		g = &GroupRow{Name: name}
		m[name] = g
	}
	return &g.Figures
}

// sorted returns the rows of m by key.
func sorted[R any](m map[string]*R) []R {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]R, 0, len(keys))
	for _, k := range keys {
		out = append(out, *m[k])
	}
	return out
}
