package policy

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// gangOn returns a running gang of n members of k slots, one member per
// worker of ws in order, on record under member 0's worker.
func gangOn(id string, class jobs.Class, k int, started time.Time, ws ...Worker) Job {
	g := sized(running(id, class, ws[0], started), k, len(ws))
	for _, w := range ws {
		g.Placed = append(g.Placed, w.ID)
	}
	return g
}

// Rule 4 moves a checkpointable gang from elastic workers back to fixed
// quota, as one job, when fixed workers of one region have room for every
// member now; the action goes to member 0's worker. Otherwise it finishes
// where it is, on workers that drain below the low watermark.
func TestSizedGangMigrates(t *testing.T) {
	burst := jobs.ClassBurst
	od := elasticPool("od", PoolOnDemand, "eu", 1.0)
	e1, e2 := worker("e1", "od", 4, 2), worker("e2", "od", 4, 2)
	g := gangOn("g", burst, 2, ago(10*time.Minute), e1, e2)
	eu := func(id string, slots, busy int) Worker { return worker(id, "fx", slots, busy) }
	us := fixedPool("fx-us", "us")
	runPlaceCases(t, []planCase{
		{"idle fixed workers take the gang; its workers drain",
			snap([]Pool{fixedPool("fx", "eu"), od}, []Worker{eu("f1", 4, 0), eu("f2", 4, 0), e1, e2}, g), t0,
			"migrate(g,e1) drain(e1) drain(e2)"},
		{"not a member fits now: 3 of 4 slots free on each fixed worker",
			snap([]Pool{fixedPool("fx", "eu"), od}, []Worker{eu("f1", 4, 1), eu("f2", 4, 1), eu("f3", 4, 1), eu("f4", 4, 1), eu("f5", 4, 1),
				e1, e2}, sized(g, 4, 2)), t0,
			"drain(e1) drain(e2)"},
		{"room for one member in each of two regions is no room for the gang",
			snap([]Pool{fixedPool("fx", "eu"), us, od}, []Worker{eu("f1", 2, 0), worker("u1", "fx-us", 2, 0), e1, e2}, g), t0,
			"drain(e1) drain(e2)"},
		{"a gang that cannot checkpoint finishes where it is",
			snap([]Pool{fixedPool("fx", "eu"), od}, []Worker{eu("f1", 4, 0), eu("f2", 4, 0), e1, e2}, noCheckpoint(g)), t0,
			"drain(e1) drain(e2)"},
	})
}

func noCheckpoint(j Job) Job {
	j.Checkpointable = false
	return j
}

// Two sized migrations in one tick never count the same free fixed slots:
// two 2 x 2 gangs and one fixed worker of 4 slots move one gang.
func TestSizedMigrationsShareNoSlot(t *testing.T) {
	burst := jobs.ClassBurst
	od := elasticPool("od", PoolOnDemand, "eu", 1.0)
	e1, e2 := worker("e1", "od", 4, 4), worker("e2", "od", 4, 4)
	a := gangOn("a", burst, 2, ago(10*time.Minute), e1, e2)
	b := gangOn("b", burst, 2, ago(20*time.Minute), e1, e2)
	// Ten fixed slots keep committed work under the high watermark (7)
	// with one gang moved (4) and not with both (8); so give the room
	// of two gangs in slots, but on one worker fit for one.
	pools := []Pool{fixedPool("fx", "eu"), od}
	ws := []Worker{worker("f1", "fx", 4, 0), worker("f2", "fx", 1, 0), worker("f3", "fx", 1, 0), worker("f4", "fx", 1, 0),
		worker("f5", "fx", 1, 0), worker("f6", "fx", 1, 0), worker("f7", "fx", 1, 0), e1, e2}
	s := snap(pools, ws, a, b)
	mustValid(t, s)
	p := Decide(s, t0)
	moved := 0
	for _, act := range p.Actions {
		if act.Kind == Migrate {
			moved++
		}
	}
	if moved != 1 {
		t.Errorf("want one gang migrated, got %d:\n%s", moved, p)
	}
	if next := Decide(Apply(s, p, t0), t0); !next.Empty() {
		t.Errorf("not idempotent: then\n%s", next)
	}
}

// Rule 1 for a queued core gang: borrowed jobs are reclaimed on fixed
// workers of one region until every member fits, and rule 8 reserves the
// freed workers for it. The region whose victims lose least is chosen.
func TestSizedReclaimForQueuedGang(t *testing.T) {
	core, burst := jobs.ClassCore, jobs.ClassBurst
	eu, us := fixedPool("fx", "eu"), fixedPool("fx-us", "us")
	f1, f2 := worker("f1", "fx", 2, 2), worker("f2", "fx", 2, 2)
	u1, u2 := worker("u1", "fx-us", 2, 2), worker("u2", "fx-us", 2, 2)
	gang := sized(queued("g", core, QueueCore, ago(time.Second)), 2, 2)
	b := func(id string, w Worker, lost time.Duration) Job { return running(id, burst, w, ago(lost)) }
	old := func() []Job {
		return []Job{b("b1", f1, 2*time.Hour), b("b2", f1, 2*time.Hour), b("b3", f2, 2*time.Hour), b("b4", f2, 2*time.Hour)}
	}
	young := []Job{b("y1", u1, 5*time.Minute), b("y2", u1, 6*time.Minute), b("y3", u2, 7*time.Minute), b("y4", u2, 8*time.Minute)}
	runPlaceCases(t, []planCase{
		{"both workers of the region are freed, then reserved",
			snap([]Pool{eu}, []Worker{f1, f2}, append(old(), gang)...), t0,
			"reclaim(b1,f1) reclaim(b2,f1) reclaim(b3,f2) reclaim(b4,f2) place(g,f1+f2)"},
		{"the region whose victims lose least",
			snap([]Pool{eu, us}, []Worker{f1, f2, u1, u2}, append(append(old(), young...), gang)...), t0,
			"reclaim(y1,u1) reclaim(y2,u1) reclaim(y3,u2) reclaim(y4,u2) place(g,u1+u2)"},
		{"free slots count: only one worker needs freeing",
			snap([]Pool{eu}, []Worker{f1, worker("f2", "fx", 2, 0)}, append(old()[:2], gang)...), t0,
			"reclaim(b1,f1) reclaim(b2,f1) place(g,f2+f1)"},
		{"a borrowed gang on both workers is one victim for both",
			snap([]Pool{eu}, []Worker{f1, f2}, gangOn("bg", burst, 2, ago(time.Hour), f1, f2), gang), t0,
			"reclaim(bg,f1) place(g,f2+f1)"},
		{"no region can ever hold the gang: nothing is reclaimed",
			snap([]Pool{eu, us}, []Worker{f1, u1}, b("b1", f1, time.Hour), b("b2", f1, time.Hour), b("y1", u1, time.Minute),
				b("y2", u1, time.Minute), gang), t0,
			""},
	})
}

// A reservation that has waited past reservationPatience moves to workers
// where the job fits now; a younger one stays, as it may be about to
// start, and one that fits nowhere else stays too.
func TestSizedReservationMoves(t *testing.T) {
	core := jobs.ClassCore
	pools := []Pool{fixedPool("fx", "eu")}
	reserved := func(j Job, at time.Duration, ws ...string) Job {
		j.Placed, j.PlacedAt = ws, ago(at)
		return j
	}
	big := sized(queued("big", core, QueueCore, ago(time.Hour)), 4, 0)
	gang := sized(queued("g", core, QueueCore, ago(time.Hour)), 2, 2)
	long := func(id string, w Worker) Job { return running(id, core, w, ago(time.Hour)) }
	f1, f2, f3 := worker("f1", "fx", 4, 1), worker("f2", "fx", 4, 0), worker("f3", "fx", 4, 0)
	full := worker("f1", "fx", 4, 4)
	runPlaceCases(t, []planCase{
		{"waited a minute: moves to the idle worker",
			snap(pools, []Worker{f1, f2}, long("l", f1), reserved(big, time.Minute, "f1")), t0, "place(big,f2)"},
		{"placed 5 s ago: stays",
			snap(pools, []Worker{f1, f2}, long("l", f1), reserved(big, 5*time.Second, "f1")), t0, ""},
		{"nowhere else fits: stays",
			snap(pools, []Worker{f1, worker("f2", "fx", 4, 1)}, long("l", f1), long("l2", worker("f2", "fx", 4, 1)),
				reserved(big, time.Minute, "f1")), t0, ""},
		{"a gang moves whole, best fit: both members on one idle worker",
			snap(pools, []Worker{f1, worker("f4", "fx", 2, 2), f2, f3}, long("l", f1), long("l4a", worker("f4", "fx", 2, 2)),
				long("l4b", worker("f4", "fx", 2, 2)), reserved(gang, time.Minute, "f1", "f4")), t0, "place(g,f2+f2)"},
		// Its own reservation closes f2 to everything else, so f2's free
		// slots are the gang's: counted, it fits there now, rather than
		// wait for f1's in-share work to end (found by the simulator's
		// fixed worker deaths).
		{"fits only with the slots it holds: moves onto the worker it holds",
			snap(pools, []Worker{full, f2}, long("a", full), long("b", full), long("c", full), long("d", full),
				reserved(gang, time.Minute, "f1", "f2")), t0, "place(g,f2+f2)"},
		{"fits nowhere even with the slots it holds: stays",
			snap(pools, []Worker{full, worker("f2", "fx", 4, 1)}, long("a", full), long("b", full), long("c", full),
				long("d", full), long("e", worker("f2", "fx", 4, 1)), reserved(gang, time.Minute, "f1", "f2")), t0, ""},
	})
}

// An elastic pool at its maximum cannot grow for the head sized job, so
// the job reserves the closest worker instead of waiting for a launch that
// cannot come while smaller jobs take the slots that free; a pool with
// room still grows for it.
func TestSizedHeadReservesInAFullElasticPool(t *testing.T) {
	burst := jobs.ClassBurst
	od := elasticPool("od", PoolOnDemand, "eu", 1.0) // 4 slots a worker
	e1, e2 := worker("e1", "od", 4, 2), worker("e2", "od", 4, 3)
	small := func(id string, w Worker) Job {
		j := running(id, burst, w, ago(time.Minute))
		j.Checkpointable = false
		return j
	}
	head := sized(queued("h", burst, QueueBurst, ago(time.Minute)), 4, 0)
	head.Checkpointable = false
	base := []Job{small("a", e1), small("b", e1), small("c", e2), small("d", e2), small("e", e2), head}
	full := od
	full.MaxWorkers = 2
	runPlaceCases(t, []planCase{
		{"at its maximum: reserve the closest", snap([]Pool{full}, []Worker{e1, e2}, base...), t0, "place(h,e1)"},
		{"with room: grow instead", snap([]Pool{od}, []Worker{e1, e2}, base...), t0, "scale_up(od,1)"},
	})
}

// Cases a second reading found: a migration in flight holds no fixed slot
// until it lands, so no second sized job migrates into the same room; a
// moved reservation frees its old worker this tick, for other work; a
// loan never moves into slots queued core work needs; and a placement of
// unknown age stays.
func TestSizedMovesInFlight(t *testing.T) {
	burst, core := jobs.ClassBurst, jobs.ClassCore
	od := elasticPool("od", PoolOnDemand, "eu", 1.0)
	e1, e2 := worker("e1", "od", 4, 4), worker("e2", "od", 4, 4)
	fx := []Worker{worker("f1", "fx", 4, 0)}
	for i := range 20 {
		fx = append(fx, worker("u"+string(rune('a'+i)), "fx", 1, 0))
	}
	a := gangOn("a", burst, 2, ago(10*time.Minute), e1, e2)
	b := gangOn("b", burst, 2, ago(20*time.Minute), e1, e2)
	pools := []Pool{fixedPool("fx", "eu"), od}
	s := snap(pools, append(fx, e1, e2), a, b)
	mustValid(t, s)
	p := Decide(s, t0)
	if n := p.Count(Migrate); n != 1 {
		t.Fatalf("want one gang migrated into f1's 4 slots, got %d:\n%s", n, p)
	}
	if next := Decide(Apply(s, p, t0), t0); next.Count(Migrate) != 0 {
		t.Fatalf("a second gang migrated while the first is in flight into the same room:\n%s", next)
	}

	reserved := func(j Job, at time.Time, ws ...string) Job {
		j.Placed, j.PlacedAt = ws, at
		return j
	}
	long := func(id string, w Worker) Job { return running(id, core, w, ago(time.Hour)) }
	f1, f2 := worker("f1", "fx", 4, 2), worker("f2", "fx", 4, 0)
	big := sized(queued("big", core, QueueCore, ago(time.Hour)), 4, 0)
	small := sized(queued("small", core, QueueCore, ago(time.Minute)), 2, 0)
	loan := sized(queued("loan", burst, QueueLoan, ago(time.Hour)), 2, 0)
	f3 := worker("f1", "fx", 4, 3)
	var cores []Job
	for i := range 4 {
		cores = append(cores, queued("c"+string(rune('0'+i)), core, QueueCore, ago(time.Second)))
	}
	runPlaceCases(t, []planCase{
		{"the moved reservation's old worker takes other work at once",
			snap([]Pool{fixedPool("fx", "eu")}, []Worker{f1, f2}, long("l1", f1), long("l2", f1), reserved(big, ago(time.Minute), "f1"), small), t0,
			"place(big,f2) place(small,f1)"},
		{"a loan does not move into slots queued core work needs",
			snap([]Pool{fixedPool("fx", "eu")}, []Worker{f3, f2}, append([]Job{long("l1", f3), long("l2", f3), long("l3", f3),
				reserved(loan, ago(time.Minute), "f1")}, cores...)...), t0,
			""},
		{"a placement of unknown age stays",
			snap([]Pool{fixedPool("fx", "eu")}, []Worker{f1, f2}, long("l1", f1), long("l2", f1), reserved(big, time.Time{}, "f1")), t0,
			""},
	})
}
