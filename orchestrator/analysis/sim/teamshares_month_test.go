package sim

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// Daily demand of one team, as a fraction of its share: a peak of
// peakLoad for peakHours a day, a base load the rest of the day, averaging
// meanLoad.
const (
	peakLoad  = 1.3
	meanLoad  = 0.4
	peakHours = 6.0
	baseLoad  = (24*meanLoad - peakHours*peakLoad) / (24 - peakHours)
)

// teamLoad is the demand of a team whose peak starts at peakAt each day,
// at offset d, as a fraction of its share.
func teamLoad(d, peakAt time.Duration) float64 {
	h := math.Mod((d - peakAt).Hours(), 24)
	if h < 0 {
		h += 24
	}
	if h < peakHours {
		return peakLoad
	}
	return baseLoad
}

// staggeredTeams is days of three teams of share slots each whose daily
// peaks are 8 h apart: core checkpointable jobs (grace 30 s) of 20 to
// 60 min arriving as a Poisson process whose rate follows teamLoad, so
// each team's offered load averages 40% of its share and peaks at 130%.
func staggeredTeams(seed uint64, days, share int) trace.Trace {
	rng := rand.New(rand.NewPCG(seed, 30))
	const meanDur = 40 * time.Minute
	var js []trace.Job
	for i, team := range []string{"A", "B", "C"} {
		peakAt := time.Duration(i*8) * time.Hour
		// Thinning: candidates at the peak rate, each kept with the load
		// at its instant over the peak load.
		rate := peakLoad * float64(share) / meanDur.Hours() // jobs per hour
		for at := time.Duration(0); ; {
			at += time.Duration(rng.ExpFloat64() / rate * float64(time.Hour))
			if at >= time.Duration(days)*24*time.Hour {
				break
			}
			if rng.Float64()*peakLoad > teamLoad(at, peakAt) {
				continue
			}
			dur := 20*time.Minute + time.Duration(rng.Int64N(int64(40*time.Minute)))
			js = append(js, trace.Job{Submit: at.Round(time.Second), Duration: dur, Slots: 1, Class: jobs.ClassCore,
				Team: team, Template: team, Checkpointable: true, Grace: 30 * time.Second})
		}
	}
	return mkTrace(js...)
}

// aboveShares is the share of the quota's slot-hours that the teams'
// demand (every job running from its submission) holds above their own
// shares: the most that lending can move onto the quota from elsewhere.
func aboveShares(tr trace.Trace, share int, teams []string) float64 {
	var over float64
	samples := 0
	for _, team := range teams {
		var js []trace.Job
		for _, j := range tr.Jobs {
			if j.Team == team {
				js = append(js, j)
			}
		}
		d := trace.Trace{Jobs: js}.Demand(time.Minute)
		samples = max(samples, len(d))
		for _, x := range d {
			over += max(float64(x-share), 0)
		}
	}
	return over / float64(share*len(teams)*samples)
}

// A month of three teams whose peaks are 8 h apart, with shares that lend
// against hard partitions (each team held to its own share: lend_limit 0,
// borrow_limit 0): elastic capacity costs at least 25% less, no owner's
// p95 in-share wait grows by more than 60 s, and the quota runs at least
// 80% of the work the teams' demand holds above their shares, which hard
// partitions send to on-demand capacity.
//
// Core work fills a partition to its whole share, so here lending can
// only add to the quota the demand above the shares: a demand d of at
// most 1.3 shares holds at most (d-1)/d <= 0.3/1.3 of itself above the
// share, so with demand averaging 0.4 shares at most 0.4 x 0.3/1.3 = 9.2
// points of the quota, short of the 15. The test logs the points
// gained beside that bound; TestSharesBeatSeparateQuotasForBurstWork
// holds burst work, which a partition runs only up to its high
// watermark, to the 15.
func TestSharesBeatHardPartitionsOverAMonth(t *testing.T) {
	days := 30
	if testing.Short() {
		days = 7
	}
	const share = 8
	tr := staggeredTeams(30, days, share)
	bound := 100 * aboveShares(tr, share, []string{"A", "B", "C"})
	od := onDemand(3, 1)
	od.MaxWorkers, od.StartupDelay = 64, 3*time.Minute
	run := func(lend bool) Result {
		cfg := sharesConfig(3*share, time.Minute, map[string]int{"A": share, "B": share, "C": share})
		cfg.CoreOverflow, cfg.CoreMaxWait = true, 10*time.Minute
		if !lend {
			for i := range cfg.Shares.Teams {
				cfg.Shares.Teams[i].LendLimit, cfg.Shares.Teams[i].BorrowLimit = 0, 0
			}
		}
		return mustRun(t, tr, Options{
			Config: cfg, Pools: []policy.Pool{quota(1), od}, FixedSlots: 3 * share, Tick: 5 * time.Second,
			CheckpointInterval: 5 * time.Minute,
		})
	}
	lent, hard := run(true), run(false)
	util := func(r Result) float64 { return 100 * (1 - r.FixedIdleShare) }
	elastic := func(r Result) float64 { return r.Cost.OnDemand + r.Cost.Spot }
	t.Logf("%d days, %d jobs; fixed utilization %.1f%% with shares, %.1f%% with hard partitions: %.1f points more, "+
		"of the %.1f points the demand holds above the shares", days, len(tr.Jobs), util(lent), util(hard),
		util(lent)-util(hard), bound)
	t.Logf("elastic spend %.1f with shares, %.1f with hard partitions (%.0f%% lower)", elastic(lent), elastic(hard),
		100*(1-elastic(lent)/elastic(hard)))
	for _, name := range []string{"A", "B", "C"} {
		l, h := teamResult(t, lent, name), teamResult(t, hard, name)
		t.Logf("team %s: p95 in-share wait %v with shares, %v with hard partitions; %d of its jobs reclaimed, losing %.2f slot-hours",
			name, l.InShareWait.P95, h.InShareWait.P95, l.Reclaimed, l.LostWork)
		if l.InShareWait.N == 0 || l.InShareWait.P95 > h.InShareWait.P95+time.Minute {
			t.Errorf("team %s: p95 in-share wait %v over %d jobs with shares, against %v; want at most 60 s more",
				name, l.InShareWait.P95, l.InShareWait.N, h.InShareWait.P95)
		}
	}
	if util(lent)-util(hard) < 0.8*bound || bound < 5 {
		t.Errorf("fixed utilization %.1f%% with shares, %.1f%% with hard partitions; want at least 80%% of the %.1f points "+
			"above the shares (and a load with at least 5)", util(lent), util(hard), bound)
	}
	if elastic(lent) > 0.75*elastic(hard) {
		t.Errorf("elastic spend %.1f with shares, %.1f with hard partitions; want at least 25%% less", elastic(lent), elastic(hard))
	}
	if lent.Unfinished != 0 || hard.Unfinished != 0 {
		t.Errorf("%d and %d jobs unfinished; want all done", lent.Unfinished, hard.Unfinished)
	}
}

// The same month with the teams' work as checkpointable burst jobs,
// against hard partitions in the form teams have without
// shares: a quota of its own per team, with its own watermarks and
// on-demand capacity. Burst work reaches a quota only by rule 2's lend,
// while committed use stays under the high watermark (70%), so a
// partition runs at most 70% of its share at the team's peak and sends
// the rest to on-demand; one quota shared by the three, whose peaks do
// not meet, runs the whole peak. That gap, (1.3-0.7) of a share for 6 h
// a day, is 15 points of the quota: the issue's "at least 15 points
// higher" is what sharing the watermark's headroom is worth here, and
// the test asks for it, with elastic spend at least 25% lower and no
// owner's p95 in-share wait more than 60 s higher.
func TestSharesBeatSeparateQuotasForBurstWork(t *testing.T) {
	const share = 8
	teams := []string{"A", "B", "C"}
	tr := staggeredTeams(30, 30, share)
	for i := range tr.Jobs {
		tr.Jobs[i].Class = jobs.ClassBurst
	}
	od := onDemand(3, 1)
	od.MaxWorkers, od.StartupDelay = 64, 3*time.Minute
	run := func(tr trace.Trace, slots map[string]int, quotaSlots int) Result {
		cfg := sharesConfig(quotaSlots, time.Minute, slots)
		return mustRun(t, tr, Options{Config: cfg, Pools: []policy.Pool{quota(1), od}, FixedSlots: quotaSlots,
			Tick: 5 * time.Second, CheckpointInterval: 5 * time.Minute})
	}
	shared := run(tr, map[string]int{"A": share, "B": share, "C": share}, 3*share)
	sharedUtil := 100 * (1 - shared.FixedIdleShare)
	sharedElastic := shared.Cost.OnDemand + shared.Cost.Spot
	var apartUtil, apartElastic float64
	for _, team := range teams {
		var js []trace.Job
		for _, j := range tr.Jobs {
			if j.Team == team {
				js = append(js, j)
			}
		}
		// A quota of the team's own: its share is the whole quota, so
		// the in-share waits are counted the same way as when shared.
		apart := run(mkTrace(js...), map[string]int{team: share}, share)
		apartUtil += 100 * (1 - apart.FixedIdleShare) / float64(len(teams))
		apartElastic += apart.Cost.OnDemand + apart.Cost.Spot
		s, a := teamResult(t, shared, team), teamResult(t, apart, team)
		t.Logf("team %s: p95 in-share wait %v shared, %v on its own quota", team, s.InShareWait.P95, a.InShareWait.P95)
		if s.InShareWait.N == 0 || s.InShareWait.P95 > a.InShareWait.P95+time.Minute {
			t.Errorf("team %s: p95 in-share wait %v over %d jobs shared, against %v on its own quota; want at most 60 s more",
				team, s.InShareWait.P95, s.InShareWait.N, a.InShareWait.P95)
		}
	}
	t.Logf("burst work, %d jobs: fixed utilization %.1f%% shared, %.1f%% on separate quotas (%.1f points more); "+
		"elastic spend %.1f against %.1f (%.0f%% lower)", len(tr.Jobs), sharedUtil, apartUtil, sharedUtil-apartUtil,
		sharedElastic, apartElastic, 100*(1-sharedElastic/apartElastic))
	if sharedUtil-apartUtil < 15 {
		t.Errorf("fixed utilization %.1f%% shared, %.1f%% on separate quotas; want at least 15 points more", sharedUtil, apartUtil)
	}
	if sharedElastic > 0.75*apartElastic {
		t.Errorf("elastic spend %.1f shared, %.1f on separate quotas; want at least 25%% less", sharedElastic, apartElastic)
	}
	if shared.Unfinished != 0 {
		t.Errorf("%d jobs unfinished; want all done", shared.Unfinished)
	}
}
