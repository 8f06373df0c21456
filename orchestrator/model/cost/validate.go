package cost

import (
	"fmt"
	"time"

	"github.com/ballastdev/ballast/internal/timespan"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// book is a ledger checked and resolved: defaults filled in, open ends
// closed at Until, every entry joined to its pool.
type book struct {
	from, until time.Time
	loc         *time.Location
	pools       map[string]policy.Pool
	quotas      map[string]Quota
	workers     []worker
	attempts    []attempt
}

// worker is a WorkerSpan with its slots and end resolved.
type worker struct {
	idx   int
	span  WorkerSpan
	pool  policy.Pool
	slots int
	end   time.Time
}

// attempt is a Usage with its end resolved.
type attempt struct {
	idx  int
	u    Usage
	pool policy.Pool
	end  time.Time
}

// problems collects every input error, so a caller fixes them in one round.
type problems struct{ list []*jobs.FieldError }

func (p *problems) add(field, format string, args ...any) {
	p.list = append(p.list, &jobs.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return &jobs.ValidationError{Problems: p.list}
}

// check validates l and resolves it into a book; the error names every
// bad entry by its index and its ID.
func check(l Ledger) (*book, error) {
	var p problems
	b := &book{from: l.From, until: l.Until, loc: l.Location}
	if b.loc == nil {
		b.loc = time.UTC
	}
	if l.From.IsZero() {
		p.add("ledger.from", "is zero; the window needs a start")
	}
	if l.Until.IsZero() {
		p.add("ledger.until", "is zero; the window needs an end")
	} else if l.Until.Before(l.From) {
		p.add("ledger.until", "%s is before from %s", l.Until.Format(time.RFC3339), l.From.Format(time.RFC3339))
	}
	b.pools = checkPools(&p, l.Pools)
	b.quotas = checkQuotas(&p, l.Quotas, b.pools)
	b.workers = checkWorkers(&p, l.Workers, b)
	b.attempts = checkUsage(&p, l.Usage, b)
	if err := p.err(); err != nil {
		return nil, err
	}
	// Coverage only makes sense once every entry has a pool and a sane
	// interval.
	checkCapacity(&p, b)
	if err := p.err(); err != nil {
		return nil, err
	}
	return b, nil
}

func checkPools(p *problems, list []policy.Pool) map[string]policy.Pool {
	pools := make(map[string]policy.Pool, len(list))
	for i, pl := range list {
		at := fmt.Sprintf("pools[%d]", i)
		switch _, dup := pools[pl.Name]; {
		case pl.Name == "":
			p.add(at+".name", "is empty; every pool needs a name")
		case dup:
			p.add(at+".name", "pool %q is listed twice", pl.Name)
		default:
			pools[pl.Name] = pl
		}
		switch pl.Kind {
		case policy.PoolFixed, policy.PoolOnDemand, policy.PoolSpot:
		default:
			p.add(at+".kind", "pool %q: kind %q is unknown (use fixed, ondemand or spot)", pl.Name, pl.Kind)
		}
		if pl.PricePerSlotHour < 0 {
			p.add(at+".price_per_slot_hour", "pool %q: is negative", pl.Name)
		}
		if !pl.Kind.Elastic() {
			continue
		}
		// An unknown granularity would silently bill per second.
		if !pl.Billing.Valid() {
			p.add(at+".billing", "pool %q: %q is unknown (use per_second, per_minute or per_hour)", pl.Name, pl.Billing)
		}
		if pl.MinBilling < 0 {
			p.add(at+".min_billing", "pool %q: is negative", pl.Name)
		}
	}
	return pools
}

func checkQuotas(p *problems, list []Quota, pools map[string]policy.Pool) map[string]Quota {
	quotas := make(map[string]Quota, len(list))
	for i, q := range list {
		at := fmt.Sprintf("quotas[%d]", i)
		pl, known := pools[q.Pool]
		switch _, dup := quotas[q.Pool]; {
		case !known:
			p.add(at+".pool", "quota of pool %q: the pool is unknown", q.Pool)
		case pl.Kind != policy.PoolFixed:
			p.add(at+".pool", "quota of pool %q: the pool is %s, not fixed", q.Pool, pl.Kind)
		case dup:
			// Two quotas of one pool with different prices would make its
			// attempts' price ambiguous.
			p.add(at+".pool", "quota of pool %q: the pool already has a quota; merge them", q.Pool)
		default:
			quotas[q.Pool] = q
		}
		if q.Slots < 0 {
			p.add(at+".slots", "quota of pool %q: %d slots is negative", q.Pool, q.Slots)
		}
		if q.PricePerSlotHour < 0 {
			p.add(at+".price_per_slot_hour", "quota of pool %q: is negative", q.Pool)
		}
	}
	return quotas
}

func checkWorkers(p *problems, list []WorkerSpan, b *book) []worker {
	out := make([]worker, 0, len(list))
	ids := make(map[string]int, len(list))
	for i, w := range list {
		at := fmt.Sprintf("workers[%d]", i)
		who := fmt.Sprintf("worker %q", w.ID)
		if w.ID != "" {
			if j, dup := ids[w.ID]; dup {
				p.add(at+".id", "%s: the ID is also workers[%d]'s", who, j)
			} else {
				ids[w.ID] = i
			}
		}
		pl, known := b.pools[w.Pool]
		switch {
		case !known:
			p.add(at+".pool", "%s: pool %q is unknown", who, w.Pool)
		case !pl.Kind.Elastic():
			p.add(at+".pool", "%s: pool %q is %s; only elastic workers are billed per use", who, w.Pool, pl.Kind)
		}
		slots := w.Slots
		if slots == 0 {
			slots = pl.SlotsPerWorker
		}
		switch {
		case w.Slots < 0:
			p.add(at+".slots", "%s: %d slots is negative", who, w.Slots)
		case known && slots <= 0:
			p.add(at+".slots", "%s: is 0 and pool %q has no SlotsPerWorker to default to", who, w.Pool)
		}
		end, ok := checkInterval(p, at, who, w.Start, w.End, b.until)
		if ok {
			out = append(out, worker{idx: i, span: w, pool: pl, slots: slots, end: end})
		}
	}
	return out
}

func checkUsage(p *problems, list []Usage, b *book) []attempt {
	out := make([]attempt, 0, len(list))
	first := make(map[string]int, len(list))
	for i, u := range list {
		at := fmt.Sprintf("usage[%d]", i)
		who := fmt.Sprintf("job %q", u.JobID)
		if u.JobID == "" {
			p.add(at+".job_id", "is empty; every attempt belongs to a job")
		} else if j, seen := first[u.JobID]; !seen {
			first[u.JobID] = i
		} else if v := list[j]; v.Team != u.Team || v.Template != u.Template {
			// The job would otherwise be charged to two teams at once.
			p.add(at, "%s: team %q and template %q differ from usage[%d]'s %q and %q",
				who, u.Team, u.Template, j, v.Team, v.Template)
		}
		pl, known := b.pools[u.Pool]
		if !known {
			p.add(at+".pool", "%s: pool %q is unknown", who, u.Pool)
		} else if _, quota := b.quotas[u.Pool]; pl.Kind == policy.PoolFixed && !quota {
			p.add(at+".pool", "%s: pool %q is fixed but has no quota to price its slots", who, u.Pool)
		}
		if u.Slots <= 0 {
			p.add(at+".slots", "%s: %d slots; an attempt holds at least one", who, u.Slots)
		}
		if u.Share < 0 || u.Share >= 1000 || (u.Share > 0 && u.Slots != 1) {
			p.add(at+".share", "%s: a share of %d thousandths on %d slots; a share is 1 to 999 of one slot", who, u.Share, u.Slots)
		}
		end, ok := checkInterval(p, at, who, u.Start, u.End, b.until)
		switch {
		case u.LostWork < 0:
			p.add(at+".lost_work", "%s: %v is negative", who, u.LostWork)
			ok = false
		case ok && u.LostWork > end.Sub(u.Start):
			p.add(at+".lost_work", "%s: %v is longer than the attempt's %v", who, u.LostWork, end.Sub(u.Start))
			ok = false
		}
		if ok {
			out = append(out, attempt{idx: i, u: u, pool: pl, end: end})
		}
	}
	return out
}

// checkInterval checks a start and end and returns the end to use: a zero
// end is still running and ends at until, or at start for something that
// only starts after the window.
func checkInterval(p *problems, at, who string, start, end, until time.Time) (time.Time, bool) {
	switch {
	case start.IsZero():
		p.add(at+".start", "%s: is zero", who)
		return time.Time{}, false
	case end.IsZero():
		return timespan.Later(until, start), true
	case end.Before(start):
		p.add(at+".end", "%s: end %s is before start %s", who, end.Format(time.RFC3339), start.Format(time.RFC3339))
		return time.Time{}, false
	}
	return end, true
}
