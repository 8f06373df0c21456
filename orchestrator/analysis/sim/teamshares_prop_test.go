package sim

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/shares"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
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
// reclaims, and whose fixed workers die: at a random rate in three seeds
// of four, for a random downtime, declared dead after a random
// worker_ttl.
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
	span := time.Duration(1+rng.IntN(3)) * time.Hour
	for range 20 + rng.IntN(60) {
		j := trace.Job{
			Submit:   time.Duration(rng.Int64N(int64(span))).Round(time.Second),
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
		FixedWorkerSlots: []int{0, 0, 4, 8}[rng.IntN(4)],
		SpotReclaimRate:  1, CheckpointInterval: time.Duration(1+rng.IntN(10)) * time.Minute,
	}
	// Drawn last, so the fleets and traces are those of the seeds before
	// deaths were modelled.
	if rng.IntN(4) > 0 {
		o.FixedDeathRate = []float64{0.2, 0.5, 1}[rng.IntN(3)]
		o.FixedDowntime = time.Duration(1+rng.IntN(30)) * time.Minute
		o.WorkerTTL = []time.Duration{0, 2 * tick, 30 * time.Second}[rng.IntN(3)]
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
//
// Fixed worker deaths. A share is slots of the quota; while fixed
// workers are down, the quota may hold fewer slots than the shares add
// up to, and then the owners cannot all have theirs: the policy never
// stops in-share work, and does not shrink shares to what is up. So the
// owner's guarantee is read as: a team is owed its share only while the
// quota is whole enough, and its reclaim_within counts from when it was
// last made so. The quota is impaired while a fixed worker is dead and
// not yet declared dead (for worker_ttl the controller cannot know: the
// policy still sees the worker and its jobs running), while the fixed
// workers that are up hold fewer slots than the sum of the shares, or
// while a job a death requeued has not started again: as live, a core
// job goes back to held, readmitted, and once rule 9 admits it again rule
// 8 may reserve it (a gang) on workers busy with in-share work, so until
// it runs the quota is not in a state rule 9 made. A
// wait owed is checked only while the quota is not impaired, and is
// counted from the later of when it began and when the last impairment
// ended (exactly: the instant of the detection or the return that ended
// it; for the last requeued job's start, the check before it, the
// earliest it can have been). The other invariants stay as strict as
// without deaths: the common slots lendable are those of the fixed
// workers the policy sees (up, or dead and not yet declared dead), so a
// death that takes common slots from borrowers must be dealt with by the
// tick after the next decision like any other limit passed, and what a
// death requeued is held to the lendable room like everything else
// borrowed, since it is admitted again before it runs.
type shareChecker struct {
	cfg    shares.Config
	quota  int
	total  int // the sum of the shares
	tick   time.Duration
	within time.Duration // the strictest reclaim_within
	// owedSince is, per team, the first check at which its in-share core
	// work waited, -1 when it does not.
	owedSince map[string]time.Duration
	last      time.Duration
	checks    int
	// impaired counts the checks with the quota impaired, afterDeath the
	// waits counted from the quota's return rather than their start.
	impaired, afterDeath int
	// recovering: at the last check, a job a death requeued had not
	// started again; recoveredAt is when the last such aftermath ended
	// (see impairment).
	recovering  bool
	recoveredAt time.Duration
	split       bool // the quota is several fixed workers
	// pastBefore: a limit was passed at the last check.
	pastBefore bool
	// model: check the model's own invariants too.
	model bool
}

func newShareChecker(o Options) *shareChecker {
	c := &shareChecker{cfg: o.Config.Shares, quota: o.FixedSlots, total: o.Config.Shares.Total(), tick: o.Tick,
		owedSince: map[string]time.Duration{},
		split:     o.FixedWorkerSlots > 0 && o.FixedWorkerSlots < o.FixedSlots}
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

func (c *shareChecker) check(s *sim, snap policy.Snapshot) error {
	c.checks++
	// The model's own invariants first, on some seeds (they rebuild the
	// policy's index, which costs a run's time many times over): a valid
	// snapshot, consistent bookkeeping, no free slot beside work it may
	// take.
	if c.model {
		if err := invariants(s, snap); err != nil {
			return err
		}
	}
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
	known := 0 // the fixed slots the policy sees
	for _, wi := range s.fixedWs {
		if s.workers[wi].state != wsGone {
			known += int(s.workers[wi].slots)
		}
	}
	lendable := float64(max(known-c.total, 0))
	var borrowed float64
	var past error
	for _, tm := range c.cfg.Teams {
		share := float64(tm.Slots)
		if hard[tm.Name] > share {
			return fmt.Errorf("team %s holds %v fixed slots with work that cannot be reclaimed, beyond its share of %v",
				tm.Name, hard[tm.Name], share)
		}
		over := max(kept[tm.Name]-share, 0)
		if over > float64(tm.BorrowLimit) {
			past = fmt.Errorf("team %s borrows %v slots, past its borrow limit of %d", tm.Name, over, tm.BorrowLimit)
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
		past = fmt.Errorf("the teams borrow %v slots, more than the %v the common slots and the lend limits allow (use %v)",
			borrowed, lendable, kept)
	}
	// Between ticks the world moves without the policy: a loan placed
	// while there was room starts when its worker's slots free, after an
	// owner took back the room. The policy sees it at the next tick and
	// must deal with it there: a limit passed at two checks in a row is
	// one it left passed for a tick.
	if past != nil && c.pastBefore {
		return past
	}
	c.pastBefore = past != nil
	// Owed: core work of the team waits for the quota and is within its
	// share. As the design counts a team's use: what it holds on the quota
	// and what it has on its way there (admitted to core, lent, migrating
	// back from elastic capacity), the job itself aside. And, as loans are
	// told apart from in-share work (work that cannot be reclaimed ranks
	// first): admitted work that cannot be reclaimed, within the share
	// beside the team's other such work, is owed whatever the team's
	// loans hold.
	bound := maps.Clone(used)
	for i := range s.tasks {
		t := &s.tasks[i]
		switch {
		case t.state == tsQueued && (t.queue == qLoan || t.queue == qCore),
			t.state == tsLeaving && t.stopped == stopMigrate:
			bound[t.team] += float64(t.total())
			if !c.reclaimable(t) {
				hard[t.team] += float64(t.total())
			}
		}
	}
	owed := map[string]bool{}
	what := map[string]string{} // the first job owed, for the report
	for i := range s.tasks {
		t := &s.tasks[i]
		if t.state != tsQueued || !t.core || (t.queue != qHeld && t.queue != qCore) {
			continue
		}
		tm, ok := c.cfg.Team(t.team)
		if !ok {
			continue
		}
		k := float64(t.total())
		admitted := 0.0
		if t.queue == qCore {
			admitted = k // in bound already
		}
		stuck := t.queue == qCore && !c.reclaimable(t) && hard[t.team]+k-admitted <= float64(tm.Slots)
		if !stuck && bound[t.team]-admitted+k > float64(tm.Slots) {
			continue
		}
		if t.slots > 1 && c.split {
			// A share is slots of the quota, not slots on one worker:
			// on a quota of several workers, free slots spread over them
			// may hold no loan to reclaim and still not fit a member of
			// several slots.
			continue
		}

		owed[t.team] = true
		if what[t.team] == "" {
			what[t.team] = fmt.Sprintf("job %s of %d x %d slots in %s, placed %v, recovered %v, stuck %v", t.id, t.replicas, t.slots, policyQueue[t.queue], t.placed >= 0, t.recovered, stuck)
		}
	}
	impaired, whole := c.impairment(s)
	if impaired {
		c.impaired++
	}
	for _, tm := range c.cfg.Teams {
		since := c.owedSince[tm.Name]
		// The clock runs from the later of the wait's start and the
		// quota's last return to whole (see shareChecker).
		from := max(since, whole)
		switch {
		case owed[tm.Name] && since < 0:
			// It began after the last check: count from now, the least it
			// can have lasted.
			c.owedSince[tm.Name] = s.now
		case owed[tm.Name] && !impaired && s.now-from > tm.ReclaimWithin:
			return fmt.Errorf("team %s has waited for its share since %v (the quota whole since %v), longer than its reclaim_within of %v (%s)",
				tm.Name, since, whole, tm.ReclaimWithin, what[tm.Name])
		case !owed[tm.Name] && since >= 0:
			if whole > since && !impaired {
				c.afterDeath++ // a wait the quota's return cut short
			}
			// The wait ended after the last check, at the earliest a tick
			// before this one.
			if end := max(c.last, s.now-c.tick); !impaired && end-from > tm.ReclaimWithin {
				return fmt.Errorf("team %s waited for its share from %v (the quota whole since %v) to %v, longer than its reclaim_within of %v",
					tm.Name, since, whole, end, tm.ReclaimWithin)
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

// impairment reports whether the quota is impaired now (see
// shareChecker) and, when it is not, when the last impairment ended: -1
// if there was none. It reads the deaths booked in the run (a death at
// at is undetected until at+ttl and down until its worker is back) and
// the jobs a death requeued.
func (c *shareChecker) impairment(s *sim) (bool, time.Duration) {
	if !slices.ContainsFunc(s.deathBook, func(d death) bool { return d.died }) {
		return false, -1 // no death yet: nothing to walk
	}
	back := func(d death) time.Duration { return max(d.at+d.down, d.at+s.ttl) }
	// impairedAt: impaired at x, or just before x with before set.
	impairedAt := func(x time.Duration, before bool) bool {
		in := func(from, to time.Duration) bool {
			if before {
				return from < x && x <= to
			}
			return from <= x && x < to
		}
		up := c.quota
		for _, d := range s.deathBook {
			if in(d.at, d.at+s.ttl) && d.died {
				return true
			}
			if in(d.at, back(d)) && d.died {
				up -= int(s.workers[d.worker].slots)
			}
		}
		return up < c.total
	}
	// The aftermath: a job a death requeued has not started again. Its
	// end is known to a check only: the earliest it can have been is the
	// last check.
	recovering := false
	for i := range s.tasks {
		if t := &s.tasks[i]; t.state == tsQueued && t.recovered {
			recovering = true
			break
		}
	}
	if !recovering && c.recovering {
		c.recoveredAt = c.last
	}
	c.recovering = recovering
	if recovering || impairedAt(s.now, false) {
		return true, 0
	}
	end := time.Duration(-1)
	if c.recovering || c.recoveredAt > 0 {
		end = c.recoveredAt
	}
	for _, d := range s.deathBook {
		for _, t := range []time.Duration{d.at + s.ttl, back(d)} {
			if t <= s.now && t > end && impairedAt(t, true) {
				end = t
			}
		}
	}
	return false, end
}

// The property test: over random fleets under team shares, every
// state the run goes through keeps the owner's guarantee and the limits
// (see shareChecker), through spot reclaims and fixed worker deaths.
func TestSharesProperties(t *testing.T) {
	skipUnderRace(t)
	n := sharesSeeds(t)
	start := time.Now()
	decisions, reclaims, spot, rebalanced, failed, deaths, lost := 0, 0, 0, 0, 0, 0, 0
	checks, impaired, afterDeath := 0, 0, 0
	for seed := range uint64(n) {
		if failed >= 10 {
			t.Fatalf("stopped after %d failing seeds", failed)
		}
		tr, o := randomShares(seed)
		c := newShareChecker(o)
		c.model = seed%50 == 0
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
		spot += r.Preemptions.Spot
		deaths += r.FixedDeaths
		checks += c.checks
		impaired += c.impaired
		afterDeath += c.afterDeath
		lost += r.Preemptions.Lost
		for _, tm := range r.Teams {
			rebalanced += tm.Rebalanced
		}
	}
	t.Logf("%d seeds, %d decisions, %d reclaims (%d by rebalancing), %d spot reclaims, %d fixed worker deaths (%d jobs lost), in %v",
		n, decisions, reclaims, rebalanced, spot, deaths, lost, time.Since(start).Round(time.Millisecond))
	t.Logf("%d of %d checks with the quota impaired; %d owed waits counted from the quota's return", impaired, checks, afterDeath)
	if reclaims == 0 || spot == 0 || deaths == 0 || lost == 0 || (n >= 100 && rebalanced == 0) {
		t.Errorf("%d reclaims, %d by rebalancing, %d spot reclaims, %d deaths losing %d jobs in %d seeds: the fleets do not test what they should",
			reclaims, rebalanced, spot, deaths, lost, n)
	}
}

// Under team shares, deciding only when something changed or a timer
// comes due must still give the result of deciding on every tick: the
// decayed usage only orders borrowers when something else moves, and a
// loan's MinRun under rebalancing is a timer the run wakes for.
func TestSharesSkippedTicksChangeNothing(t *testing.T) {
	skipUnderRace(t)
	for seed := range uint64(20) {
		tr, o := randomShares(seed)
		skip, every := runWith(t, tr, o, false, false), runWith(t, tr, o, true, false)
		if every.Decisions <= skip.Decisions {
			t.Fatalf("seed %d: %d decisions on every tick, %d skipping; want more", seed, every.Decisions, skip.Decisions)
		}
		skip.Decisions, every.Decisions = 0, 0
		if !reflect.DeepEqual(skip, every) {
			t.Errorf("seed %d: skipping ticks gives\n%+v\nevery tick\n%+v", seed, skip, every)
		}
	}
}
