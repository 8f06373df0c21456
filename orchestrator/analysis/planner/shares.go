package planner

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// ShareStep is the resolution shares are sized at: a minute, fine enough
// for jobs of minutes and small enough in memory for months of trace.
const ShareStep = time.Minute

// ShareSize is a suggested share of the fixed quota for one team.
type ShareSize struct {
	Team string `json:"team"`
	// Mean, Median and Peak describe the team's demand in slots over the
	// trace; Percentile is the slots its demand stayed at or below for the
	// fraction P of the time, rounded up to whole slots.
	Mean       float64 `json:"mean"`
	Median     int     `json:"median"`
	Percentile int     `json:"percentile"`
	Peak       int     `json:"peak"`
	// Slots is the share suggested: Percentile, scaled down with the
	// others when together they pass the quota.
	Slots int `json:"slots"`
}

// ShareSizes is a suggested division of a quota among teams.
type ShareSizes struct {
	// Quota is the fixed slots divided, P the percentile sized at.
	Quota int         `json:"quota"`
	P     float64     `json:"p"`
	Teams []ShareSize `json:"teams"`
	// Scaled is set when the percentiles together passed the quota and
	// the shares were scaled down to fit it.
	Scaled bool `json:"scaled"`
	// Common is what no share covers.
	Common int `json:"common"`
}

// SizeShares suggests a share per team of tr (jobs without a team are
// left out: they own no share) sized to cover its demand the fraction p
// of the time. Demand is the trace's: every job running from its submit
// for its duration, whatever pool served it, which is the load a share
// would have to hold for the team never to wait or borrow. When the
// percentiles together pass quota, the shares are scaled down in
// proportion (largest remainders get the odd slots), as a share above the
// quota cannot be configured.
func SizeShares(tr trace.Trace, quota int, p float64) (ShareSizes, error) {
	if p <= 0 || p > 1 {
		return ShareSizes{}, fmt.Errorf("the percentile %v is not in (0, 1]: give 0.9 for the 90th", p)
	}
	if quota < 0 {
		return ShareSizes{}, fmt.Errorf("the quota %d is negative", quota)
	}
	byTeam := map[string][]trace.Job{}
	for _, j := range tr.Jobs {
		if j.Team != "" {
			byTeam[j.Team] = append(byTeam[j.Team], j)
		}
	}
	out := ShareSizes{Quota: quota, P: p}
	sum := 0
	for _, team := range slices.Sorted(maps.Keys(byTeam)) {
		// Every team's curve spans the whole trace, so a team that ran
		// only in the first week is idle, not absent, in the others.
		d := trace.Trace{Start: tr.Start, Jobs: byTeam[team]}
		samples := d.Demand(ShareStep)
		if n := ceilSteps(tr.Span(), ShareStep); len(samples) < n {
			samples = append(samples, make([]int, n-len(samples))...)
		}
		s := ShareSize{Team: team}
		if len(samples) > 0 {
			total := 0
			for _, v := range samples {
				total += v
			}
			s.Mean = float64(total) / float64(len(samples))
			sorted := slices.Sorted(slices.Values(samples))
			s.Median = nearestRank(sorted, 0.5)
			s.Percentile = nearestRank(sorted, p)
			s.Peak = sorted[len(sorted)-1]
		}
		s.Slots = s.Percentile
		sum += s.Slots
		out.Teams = append(out.Teams, s)
	}
	if sum > quota {
		out.Scaled = true
		scaleShares(out.Teams, sum, quota)
		sum = quota
	}
	out.Common = quota - sum
	return out, nil
}

// nearestRank is the nearest-rank p-quantile of sorted: a value the
// series really took.
func nearestRank(sorted []int, p float64) int {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ceilSteps(d, step time.Duration) int { return int((d + step - 1) / step) }

// scaleShares scales the teams' slots from sum down to quota: each its
// proportional part rounded down, then a slot more to the largest
// remainders (ties by name) until the quota is reached.
func scaleShares(teams []ShareSize, sum, quota int) {
	type rem struct {
		i    int
		frac float64
	}
	var rems []rem
	given := 0
	for i := range teams {
		exact := float64(teams[i].Slots) * float64(quota) / float64(sum)
		teams[i].Slots = int(math.Floor(exact))
		given += teams[i].Slots
		rems = append(rems, rem{i, exact - math.Floor(exact)})
	}
	slices.SortStableFunc(rems, func(a, b rem) int { return cmp.Compare(b.frac, a.frac) })
	for k := 0; given < quota; k++ {
		teams[rems[k].i].Slots++
		given++
	}
}
