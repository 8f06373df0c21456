package cost

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/ballastdev/ballast/internal/timespan"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

// step changes a pool's slots in use (used) or available (avail) at an
// instant, in thousandths of a slot, so attempts that share a GPU add up.
type step struct {
	at          time.Time
	used, avail int
}

// checkCapacity reports, for each pool, the first instant in the window
// when its attempts hold more slots than it had: more than the quota, or
// more than its elastic workers alive then. An elastic attempt that no
// worker covers is the case of zero workers. Attempts do not say which
// worker they ran on, so this is the strongest check the ledger allows,
// and it is what keeps idle figures from going negative.
func checkCapacity(p *problems, b *book) {
	steps := make(map[string][]step)
	for _, w := range b.workers {
		if s, e, ok := clip(w.span.Start, w.end, b.from, b.until); ok {
			steps[w.pool.Name] = append(steps[w.pool.Name], step{at: s, avail: 1000 * w.slots}, step{at: e, avail: -1000 * w.slots})
		}
	}
	for _, a := range b.attempts {
		if s, e, ok := clip(a.u.Start, a.end, b.from, b.until); ok {
			steps[a.pool.Name] = append(steps[a.pool.Name], step{at: s, used: a.u.Milli()}, step{at: e, used: -a.u.Milli()})
		}
	}
	names := make([]string, 0, len(steps))
	for n := range steps {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		pl := b.pools[name]
		avail := 0
		if pl.Kind == policy.PoolFixed {
			avail = 1000 * b.quotas[name].Slots
		}
		ss := steps[name]
		slices.SortFunc(ss, func(x, y step) int { return x.at.Compare(y.at) })
		used := 0
		// Everything at one instant is applied before comparing, so a
		// worker released as an attempt ends, or started as one starts,
		// is no conflict.
		for i := 0; i < len(ss); {
			t := ss[i].at
			for ; i < len(ss) && ss[i].at.Equal(t); i++ {
				used += ss[i].used
				avail += ss[i].avail
			}
			if used > avail {
				overbooked(p, b, pl, t, used, avail)
				break
			}
		}
	}
}

// overbooked reports the attempt that started last among those running on
// pl at t: the one that did not fit. used and avail are thousandths.
func overbooked(p *problems, b *book, pl policy.Pool, t time.Time, usedMilli, availMilli int) {
	used, avail := slotsText(usedMilli), slotsText(availMilli)
	var last *attempt
	for i := range b.attempts {
		a := &b.attempts[i]
		if a.pool.Name != pl.Name || t.Before(timespan.Later(a.u.Start, b.from)) || !t.Before(a.end) {
			continue
		}
		if last == nil || !a.u.Start.Before(last.u.Start) {
			last = a
		}
	}
	when := t.In(b.loc).Format(time.RFC3339)
	if last == nil {
		// Unreachable: slots in use imply an attempt running.
		p.add("usage", "pool %q has %s slots in use at %s but %s available", pl.Name, used, when, avail)
		return
	}
	at := fmt.Sprintf("usage[%d]", last.idx)
	switch {
	case pl.Kind == policy.PoolFixed:
		p.add(at, "job %q: pool %q has %s slots in use at %s but a quota of %s", last.u.JobID, pl.Name, used, when, avail)
	case availMilli == 0:
		p.add(at, "job %q: no worker span of pool %q covers %s", last.u.JobID, pl.Name, when)
	default:
		p.add(at, "job %q: pool %q has %s slots in use at %s but %s on its workers", last.u.JobID, pl.Name, used, when, avail)
	}
}

// slotsText writes thousandths of a slot as slots: "3", or "1.5".
func slotsText(milli int) string {
	if milli%1000 == 0 {
		return strconv.Itoa(milli / 1000)
	}
	return strconv.FormatFloat(float64(milli)/1000, 'f', -1, 64)
}
