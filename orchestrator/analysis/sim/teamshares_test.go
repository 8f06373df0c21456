package sim

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/shares"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// teamJob is a core job of team, checkpointable with grace when grace > 0.
func teamJob(team string, submit, dur, grace time.Duration) trace.Job {
	return trace.Job{Submit: submit, Duration: dur, Slots: 1, Class: jobs.ClassCore, Team: team, Template: team,
		Checkpointable: grace > 0, Grace: grace}
}

// sharesConfig is the default policy with these shares, each team
// lending all of its share and borrowing up to the quota.
func sharesConfig(quota int, within time.Duration, slots map[string]int) policy.Config {
	cfg := policy.DefaultConfig()
	for _, name := range sortedKeys(slots) {
		cfg.Shares.Teams = append(cfg.Shares.Teams, shares.Team{
			Name: name, Slots: slots[name], LendLimit: slots[name], BorrowLimit: quota, Weight: 1, ReclaimWithin: within,
		})
	}
	return cfg
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// runHooked runs tr under o with a check before every Decide and a look
// at every action, and returns the Result.
func runHooked(t *testing.T, tr trace.Trace, o Options, check func(*sim, policy.Snapshot) error,
	act func(*sim, policy.Action)) Result {
	t.Helper()
	s, err := newSim(tr, o)
	if err != nil {
		t.Fatal(err)
	}
	s.check, s.onAction = check, act
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	return s.result()
}

func teamResult(t *testing.T, r Result, name string) TeamResult {
	t.Helper()
	for _, tr := range r.Teams {
		if tr.Team == name {
			return tr
		}
	}
	t.Fatalf("no team %q in %+v", name, r.Teams)
	return TeamResult{}
}

// The owner-guarantee scenario, over 20 seeds: 16 fixed slots
// shared A 8, B 4, C 4, a tick of 1 s. A fills all 16 with checkpointable
// 2 h jobs (grace 30 s, a checkpoint every 5 min), 8 of them loans; then B
// and later C submit 4 core jobs each. At each step exactly 4 of A's loans
// are reclaimed, never one of its 8 in-share jobs, and the owner's jobs
// start within a tick plus the grace plus 5 s; no victim loses more than
// 5 slot-minutes. The seeds vary when A's jobs arrive and when B and C
// come.
func TestSharesOwnersReclaimTheirShare(t *testing.T) {
	const (
		tick     = time.Second
		grace    = 30 * time.Second
		maxStart = 36 * time.Second
		maxLost  = 5 * time.Minute
	)
	var worstWait time.Duration
	var worstLost float64
	defer func() {
		t.Logf("over 20 seeds: the owners' jobs started at most %v after submission; a victim lost at most %.2f slot-minutes",
			worstWait, worstLost)
	}()
	for seed := range uint64(20) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 33))
			var js []trace.Job
			for range 16 {
				js = append(js, teamJob("A", time.Duration(rng.IntN(60_000))*time.Millisecond, 2*time.Hour, grace))
			}
			bAt := 10*time.Minute + time.Duration(rng.IntN(40*60_000))*time.Millisecond
			cAt := bAt + 5*time.Minute + time.Duration(rng.IntN(30*60_000))*time.Millisecond
			for i := range 4 {
				js = append(js, teamJob("B", bAt+time.Duration(i*rng.IntN(3000))*time.Millisecond, 3*time.Hour, 0))
				js = append(js, teamJob("C", cAt+time.Duration(i*rng.IntN(3000))*time.Millisecond, 3*time.Hour, 0))
			}
			o := Options{
				Pools: []policy.Pool{quota(1)}, FixedSlots: 16, Tick: tick, CheckpointInterval: 5 * time.Minute,
				Config: sharesConfig(16, time.Minute, map[string]int{"A": 8, "B": 4, "C": 4}),
			}
			type reclaim struct {
				at     time.Duration
				owner  string
				victim int32
				loan   bool
			}
			var got []reclaim
			act := func(s *sim, a policy.Action) {
				if a.Kind != policy.Reclaim {
					return
				}
				ti := parseID('j', a.Job)
				v := &s.tasks[ti]
				// A's in-share jobs are its first 8 on the quota by start,
				// then ID (all of A's work is reclaimable).
				var running []int32
				for i := range s.tasks {
					if u := &s.tasks[i]; u.team == v.team && u.state != tsFree && u.state != tsQueued {
						running = append(running, int32(i))
					}
				}
				slices.SortFunc(running, func(x, y int32) int {
					return cmp.Or(cmp.Compare(s.tasks[x].startedAt, s.tasks[y].startedAt), cmp.Compare(x, y))
				})
				got = append(got, reclaim{at: s.now, owner: a.Owner, victim: ti, loan: slices.Index(running, ti) >= 8})
				if v.team != "A" {
					t.Errorf("at %v a reclaim of %s's job %s", s.now, v.team, a.Job)
				}
			}
			r := runHooked(t, mkTrace(js...), o, nil, act)

			for _, step := range []struct {
				owner string
				at    time.Duration
			}{{"B", bAt}, {"C", cAt}} {
				n := 0
				for _, g := range got {
					if g.at >= step.at && g.at <= step.at+maxStart {
						n++
						if !g.loan {
							t.Errorf("at %v job %s, one of A's in-share jobs, was reclaimed for %s", g.at, indexID('j', g.victim), g.owner)
						}
						if g.owner != step.owner {
							t.Errorf("at %v a reclaim for %q, want for %s", g.at, g.owner, step.owner)
						}
					}
				}
				if n != 4 {
					t.Errorf("%s's step at %v reclaimed %d of A's jobs, want exactly 4 (all reclaims: %+v)", step.owner, step.at, n, got)
				}
			}
			if len(got) != 8 {
				t.Errorf("%d reclaims in all, want 8: %+v", len(got), got)
			}
			for _, name := range []string{"B", "C"} {
				w := teamResult(t, r, name).InShareWait
				worstWait = max(worstWait, w.Max)
				if w.N != 4 || w.Max > maxStart {
					t.Errorf("%s: %d in-share jobs started, the last after %v; want 4 within %v", name, w.N, w.Max, maxStart)
				}
			}
			a := teamResult(t, r, "A")
			worstLost = max(worstLost, a.MaxLostPerStop*60)
			if a.Reclaimed != 8 || a.MaxLostPerStop*60 > maxLost.Minutes() {
				t.Errorf("A: %d jobs reclaimed, the worst losing %.2f slot-minutes; want 8, at most %v each",
					a.Reclaimed, a.MaxLostPerStop*60, maxLost)
			}
			if r.Jobs != len(js) {
				t.Errorf("%d of %d jobs finished", r.Jobs, len(js))
			}
		})
	}
}

// A lend limit holds once loans run: C borrows A's two lendable slots; B
// lends none of its two, which stay free. When A's own job comes it starts
// at once on one of the free slots (the owner always wins), which leaves
// C holding more than A and the common slots may lend: one of C's loans
// is reclaimed in the same tick, charged to B, whose unlent slot it
// stood on, and nothing borrows B's slots again.
func TestSharesKeepLendLimits(t *testing.T) {
	cfg := sharesConfig(6, time.Minute, map[string]int{"A": 2, "B": 2, "C": 2})
	cfg.Shares.Teams[1].LendLimit = 0
	var js []trace.Job
	for range 4 {
		js = append(js, teamJob("C", 0, 3*time.Hour, 10*time.Second))
	}
	js = append(js, teamJob("A", 30*time.Minute, time.Hour, 0))
	o := Options{Pools: []policy.Pool{quota(1)}, FixedSlots: 6, Tick: time.Second, CheckpointInterval: 5 * time.Minute, Config: cfg}
	var got []policy.Action
	r := runHooked(t, mkTrace(js...), o, nil, func(s *sim, a policy.Action) {
		if a.Kind == policy.Reclaim {
			got = append(got, a)
			if s.now != 30*time.Minute {
				t.Errorf("a reclaim at %v, want at 30m, the tick A's job started", s.now)
			}
		}
	})
	if len(got) != 1 || got[0].Team != "C" || got[0].Owner != "B" {
		t.Fatalf("reclaims %+v; want one of C's loans, for B", got)
	}
	if a := teamResult(t, r, "A"); a.InShareWait.N != 1 || a.InShareWait.Max > time.Second {
		t.Errorf("A's job waited %v; want it to start within the tick", a.InShareWait.Max)
	}
	if c := teamResult(t, r, "C"); c.Reclaimed != 1 {
		t.Errorf("C had %d jobs reclaimed, want 1", c.Reclaimed)
	}
}
