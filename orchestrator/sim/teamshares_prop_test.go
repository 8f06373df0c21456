package sim

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ballastdev/ballast/jobs"
	"github.com/ballastdev/ballast/orchestrator/policy"
	"github.com/ballastdev/ballast/orchestrator/shares"
	"github.com/ballastdev/ballast/orchestrator/trace"
)

// sharesSeeds is how many random fleets the property test runs: 1,000,
// 100 with -short, or BALLAST_SHARES_SEEDS.
func sharesSeeds(t *testing.T) int {
	if v := os.Getenv("BALLAST_SHARES_SEEDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("BALLAST_SHARES_SEEDS is %q; write a number of seeds >= 1", v)
		}
		return n
	}
	if testing.Short() {
		return 100
	}
	return 1000
}

// randomShares is a random fleet under team shares: 3 to 6 teams with
// random shares (some quota left common), lend and borrow limits, weights
// and reclaim_within, rebalancing on or off, and a trace of core and burst
// jobs of every team, some checkpointable with a grace, some gangs, on a
// quota beside on-demand and spot pools whose workers the provider
// reclaims.
func randomShares(seed uint64) (trace.Trace, Options) {
	rng := rand.New(rand.NewPCG(seed, 0x5ea5))
	const tick = 5 * time.Second
	q := 8 + rng.IntN(17)
	n := 3 + rng.IntN(4)
	cfg := policy.DefaultConfig()
	cfg.CoreOverflow = rng.IntN(2) == 0
	cfg.CoreMaxWait = time.Duration(5+rng.IntN(30)) * time.Minute
	left := q - rng.IntN(q/4+1) // the rest is common
	for i := range n {
		slots := min(left, rng.IntN(2*q/n+1))
		left -= slots
		cfg.Shares.Teams = append(cfg.Shares.Teams, shares.Team{
			Name: fmt.Sprintf("t%d", i), Slots: slots, LendLimit: rng.IntN(slots + 1), BorrowLimit: rng.IntN(q + 1),
			Weight:        []float64{0.5, 1, 2, 4}[rng.IntN(4)],
			ReclaimWithin: 2*tick + time.Duration(rng.IntN(120))*time.Second,
		})
	}
	cfg.Shares.HalfLife = time.Duration(1+rng.IntN(24)) * time.Hour
	if rng.IntN(2) == 0 {
		cfg.Shares.Rebalance = shares.Rebalance{Enabled: true, MinRun: time.Duration(rng.IntN(10)) * time.Minute,
			DeadZone: rng.Float64() * 2, MaxPerAttempt: 1 + rng.IntN(3)}
	}
	var js []trace.Job
	for range 20 + rng.IntN(40) {
		j := trace.Job{
			Submit:   time.Duration(rng.IntN(3*3600)) * time.Second,
			Duration: time.Duration(5+rng.IntN(115)) * time.Minute,
			Slots:    1, Class: jobs.ClassCore, Team: fmt.Sprintf("t%d", rng.IntN(n)), Template: "x",
			Checkpointable: rng.IntN(5) < 3,
			Grace:          []time.Duration{0, 5 * time.Second, 20 * time.Second, time.Minute, 200 * time.Second}[rng.IntN(5)],
		}
		if rng.IntN(10) < 3 {
			j.Class = jobs.ClassBurst
		}
		switch rng.IntN(10) {
		case 0:
			j.Slots = 2
		case 1:
			j.Replicas = 2
		}
		js = append(js, j)
	}
	od := onDemand(3, 1)
	od.MaxWorkers = 8
	sp := spotPool(1, 1)
	sp.MaxWorkers = 8
	o := Options{
		Config: cfg, Pools: []policy.Pool{quota(1), od, sp}, FixedSlots: q, Tick: tick, Seed: seed,
		SpotReclaimRate: 1, CheckpointInterval: time.Duration(1+rng.IntN(10)) * time.Minute,
	}
	return mkTrace(js...), o
}

// shareChecker holds a run under team shares to the invariants,
// before every Decide (the model only changes at events, each followed by
// a Decide within a tick, so these are every state the run went through):
// no attempt that cannot be reclaimed holds another team's share or common
// slots, no team waits for its share longer than its reclaim_within, no
// team borrows past its borrow limit nor do the borrowers together hold
// more than the common slots and the lend limits allow, and no job is
// preempted by rebalancing more often than configured.
type shareChecker struct {
	cfg    shares.Config
	quota  int
	tick   time.Duration
	within time.Duration // the strictest reclaim_within
	// owedSince is, per team, the first check at which its in-share core
	// work waited, -1 when it does not.
	owedSince map[string]time.Duration
	last      time.Duration
	checks    int
}

func newShareChecker(o Options) *shareChecker {
	c := &shareChecker{cfg: o.Config.Shares, quota: o.FixedSlots, tick: o.Tick, owedSince: map[string]time.Duration{}}
	c.within = never
	for _, t := range c.cfg.Teams {
		c.within = min(c.within, t.ReclaimWithin)
		c.owedSince[t.Name] = -1
	}
	return c
}

func (c *shareChecker) reclaimable(t *task) bool {
	return t.ckpt && t.grace+c.tick <= c.within
}

func (c *shareChecker) check(s *sim, _ policy.Snapshot) error {
	c.checks++
	// used is what each team holds on the quota; kept what it keeps once
	// the stops in flight land, which the limits are held to: a loan
	// being reclaimed has been dealt with.
	used, kept := map[string]float64{}, map[string]float64{}
	hard := map[string]float64{} // what cannot be reclaimed
	for _, wi := range s.fixedWs {
		for _, ti := range s.workers[wi].tasks {
			t := &s.tasks[ti]
			k := float64(t.slotsOn(wi))
			used[t.team] += k
			if t.state != tsLeaving {
				kept[t.team] += k
			}
			if !c.reclaimable(t) {
				hard[t.team] += k
			}
		}
	}
	lendable := float64(c.quota - c.cfg.Total())
	var borrowed float64
	for _, tm := range c.cfg.Teams {
		share := float64(tm.Slots)
		if hard[tm.Name] > share {
			return fmt.Errorf("team %s holds %v fixed slots with work that cannot be reclaimed, beyond its share of %v",
				tm.Name, hard[tm.Name], share)
		}
		over := max(kept[tm.Name]-share, 0)
		if over > float64(tm.BorrowLimit) {
			return fmt.Errorf("team %s borrows %v slots, past its borrow limit of %d", tm.Name, over, tm.BorrowLimit)
		}
		borrowed += over
		lendable += min(share-min(kept[tm.Name], share), float64(tm.LendLimit))
	}
	for team, k := range kept {
		if _, ok := c.cfg.Team(team); !ok {
			borrowed += k // a team without a share borrows all it uses
		}
	}
	if borrowed > lendable+1e-9 {
		return fmt.Errorf("the teams borrow %v slots, more than the %v the common slots and the lend limits allow (use %v)",
			borrowed, lendable, kept)
	}
	// Owed: core work of the team waits for the quota, and fits in its
	// share beside what the team holds there or has on its way there (lent
	// burst work, work migrating back from elastic capacity).
	bound := maps.Clone(used)
	for i := range s.tasks {
		t := &s.tasks[i]
		switch {
		case t.state == tsQueued && t.queue == qLoan,
			t.state == tsLeaving && t.stopped == stopMigrate:
			bound[t.team] += float64(t.total())
		}
	}
	owed := map[string]bool{}
	for i := range s.tasks {
		t := &s.tasks[i]
		if t.state != tsQueued || !t.core || (t.queue != qHeld && t.queue != qCore) {
			continue
		}
		if tm, ok := c.cfg.Team(t.team); ok && bound[t.team]+float64(t.total()) <= float64(tm.Slots) {
			owed[t.team] = true
		}
	}
	for _, tm := range c.cfg.Teams {
		since := c.owedSince[tm.Name]
		switch {
		case owed[tm.Name] && since < 0:
			// It began after the last check: count from now, the least it
			// can have lasted.
			c.owedSince[tm.Name] = s.now
		case owed[tm.Name] && s.now-since > tm.ReclaimWithin:
			return fmt.Errorf("team %s has waited for its share since %v, longer than its reclaim_within of %v", tm.Name, since, tm.ReclaimWithin)
		case !owed[tm.Name] && since >= 0:
			// The wait ended after the last check, at the earliest a tick
			// before this one.
			if end := max(c.last, s.now-c.tick); end-since > tm.ReclaimWithin {
				return fmt.Errorf("team %s waited for its share from %v to %v, longer than its reclaim_within of %v",
					tm.Name, since, end, tm.ReclaimWithin)
			}
			c.owedSince[tm.Name] = -1
		}
	}
	if r := c.cfg.Rebalance; r.Enabled {
		for i := range s.tasks {
			if t := &s.tasks[i]; t.state != tsFree && int(t.rebalanced) > r.MaxPerAttempt {
				return fmt.Errorf("job %s was preempted by rebalancing %d times, more than %d", t.id, t.rebalanced, r.MaxPerAttempt)
			}
		}
	}
	c.last = s.now
	return nil
}

// The property test: over random fleets under team shares, every
// state the run goes through keeps the owner's guarantee and the limits
// (see shareChecker). The simulator models spot reclaims but not the death
// of a fixed worker, so those are not exercised here.
func TestSharesProperties(t *testing.T) {
	n := sharesSeeds(t)
	start := time.Now()
	decisions, reclaims, failed := 0, 0, 0
	for seed := range uint64(n) {
		if failed >= 10 {
			t.Fatalf("stopped after %d failing seeds", failed)
		}
		tr, o := randomShares(seed)
		c := newShareChecker(o)
		s, err := newSim(tr, o)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		s.check = c.check
		if err := s.run(); err != nil {
			failed++
			t.Errorf("seed %d (BALLAST_SHARES_SEEDS=%d reproduces it): %v", seed, seed+1, err)
			continue
		}
		r := s.result()
		decisions += r.Decisions
		reclaims += r.Preemptions.Reclaim
	}
	t.Logf("%d seeds, %d decisions, %d reclaims, in %v", n, decisions, reclaims, time.Since(start).Round(time.Millisecond))
	if reclaims == 0 {
		t.Errorf("no reclaim in %d seeds: the fleets never test the owner's guarantee", n)
	}
}
