package policy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func TestRepack(t *testing.T) {
	burst := jobs.ClassBurst
	od := elasticPool("od", PoolOnDemand, "eu", 1.0)
	hourly := od
	hourly.Billing = BillingPerHour
	// The quota is above the high watermark: rule 4 stays out of it, and
	// a repack is not a move to the quota.
	pools := []Pool{fixedPool("fx", "eu"), od}
	fx := worker("f1", "fx", 10, 8)
	o := func(id string) Worker { return worker(id, "od", 4, 0) }
	ck := func(id string, w Worker) Job { return running(id, burst, w, ago(30*time.Minute)) }
	pinned := func(id string, w Worker) Job {
		j := ck(id, w)
		j.Checkpointable = false
		return j
	}
	on := func(ws []Worker, js ...Job) Snapshot { return snap(pools, append([]Worker{fx}, ws...), js...) }
	o1, o2, o3 := o("o1"), o("o2"), o("o3")

	runCases(t, []planCase{
		{"a worker of checkpointable burst work empties into another's free slots",
			on([]Worker{o1, o2}, ck("b1", o1), pinned("n1", o2), pinned("n2", o2)), t0,
			"repack(b1,o1) drain(o1)"},
		{"a job younger than the pool's idle TTL stays: it may end before a worker would be released",
			on([]Worker{o1, o2}, running("b1", burst, o1, ago(5*time.Minute)), pinned("n1", o2)), t0, ""},
		{"a worker more than half busy stays: moving its jobs would only shuffle slots",
			on([]Worker{o1, o2}, ck("b1", o1), ck("b2", o1), ck("b3", o1), pinned("n1", o2)), t0, ""},
		{"half busy it goes",
			on([]Worker{o1, o2}, ck("b1", o1), ck("b2", o1), pinned("n1", o2)), t0, "repack(b1,o1) repack(b2,o1) drain(o1)"},
		{"work that cannot checkpoint pins its worker",
			on([]Worker{o1, o2}, ck("b1", o1), pinned("n0", o1), pinned("n1", o2)), t0, ""},
		{"no room on the others",
			on([]Worker{o1, o2}, ck("b1", o1), pinned("n1", o2), pinned("n2", o2), pinned("n3", o2), pinned("n4", o2)), t0, ""},
		{"an idle worker's free slots do not count: it is released instead",
			on([]Worker{o1, o2}, ck("b1", o1)), t0, "release(o2)"},
		{"queued work placed on the pool takes the free slots first",
			on([]Worker{o1, o2}, ck("b1", o1), pinned("n1", o2), pinned("n2", o2), pinned("n3", o2),
				queued("q1", burst, QueueBurst, ago(time.Minute))), t0, ""},
		{"fewest jobs first, and each free slot counted once",
			on([]Worker{o1, o2, o3}, ck("b1", o1), ck("b2", o2), ck("b3", o2), pinned("n1", o3), pinned("n2", o3), pinned("n3", o3)), t0,
			"repack(b1,o1) drain(o1)"},
		{"a sized job pins its worker",
			func() Snapshot {
				s := ck("s1", o1)
				s.Slots = 2
				return on([]Worker{o1, o2}, s, pinned("n1", o2))
			}(), t0, ""},
		{"core work stays: it goes home through rule 4 only",
			func() Snapshot {
				k := ck("k1", o1)
				k.Class = jobs.ClassCore
				k.Queue = QueueOverflow
				return on([]Worker{o1, o2}, k, pinned("n1", o2))
			}(), t0, ""},
		{"not while the pool launches workers",
			func() Snapshot {
				s := on([]Worker{o1, o2}, ck("b1", o1), pinned("n1", o2))
				s.Launches = []Launch{{Pool: "od", Count: 1, RequestedAt: ago(time.Minute)}}
				return s
			}(), t0, ""},
		{"a paid hour is not cut short",
			func() Snapshot {
				s := snap([]Pool{fixedPool("fx", "eu"), hourly}, []Worker{fx, o1, o2}, ck("b1", o1), pinned("n1", o2))
				s.Workers[1].StartedAt = ago(70 * time.Minute) // 50 minutes of its second hour are paid
				return fixBusy(s)
			}(), t0, ""},
		{"at the end of a paid hour it goes",
			func() Snapshot {
				s := snap([]Pool{fixedPool("fx", "eu"), hourly}, []Worker{fx, o1, o2}, ck("b1", o1), pinned("n1", o2))
				s.Workers[1].StartedAt = ago(119 * time.Minute)
				return fixBusy(s)
			}(), t0, "repack(b1,o1) drain(o1)"},
		{"a whole job fills a worker of one slot: it stays",
			func() Snapshot {
				one := od
				one.SlotsPerWorker = 1
				a, b := worker("a", "od", 1, 0), worker("b", "od", 1, 0)
				return snap([]Pool{fixedPool("fx", "eu"), one}, []Worker{fx, a, b}, ck("b1", a))
			}(), t0, "release(b)"},
	})
}

// TestRepackShares covers GPU shares under rule 5: counted at their
// share, moved into the room beside other workers' shares, on workers of
// one GPU too.
func TestRepackShares(t *testing.T) {
	burst := jobs.ClassBurst
	one := elasticPool("od", PoolOnDemand, "eu", 1.0)
	one.SlotsPerWorker = 1
	four := elasticPool("od", PoolOnDemand, "eu", 1.0)
	fx := worker("f1", "fx", 10, 8)
	share := func(id string, w Worker, milli int, ck bool) Job {
		j := running(id, burst, w, ago(30*time.Minute))
		j.Share, j.Checkpointable = milli, ck
		return j
	}
	whole := func(id string, w Worker) Job {
		j := running(id, burst, w, ago(30*time.Minute))
		j.Checkpointable = false
		return j
	}
	// on builds the snapshot with each worker's Busy the whole GPUs its
	// jobs fill with shares packed by their sum, as on a worker of one
	// GPU; cases whose shares sit apart on several say so with reports.
	on := func(pool Pool, ws []Worker, js ...Job) Snapshot {
		milli := map[string]int{}
		for _, j := range js {
			if j.Share > 0 {
				milli[j.Worker] += j.Share
			} else {
				milli[j.Worker] += 1000
			}
		}
		all := []Worker{fx}
		for _, w := range ws {
			w.Busy = (milli[w.ID] + 999) / 1000
			w.IdleSince = time.Time{}
			all = append(all, w)
		}
		return Snapshot{Config: DefaultConfig(), Pools: []Pool{fixedPool("fx", "eu"), pool}, Workers: all, Jobs: js}
	}
	a, b, c, e := worker("a", "od", 1, 0), worker("b", "od", 1, 0), worker("c", "od", 1, 0), worker("e", "od", 1, 0)
	o1, o2 := worker("o1", "od", 4, 0), worker("o2", "od", 4, 0)

	runCases(t, []planCase{
		{"a one-GPU worker of checkpointable shares empties into the room beside others'",
			on(one, []Worker{a, b, c}, share("s1", a, 300, true), share("s2", a, 200, true), share("p1", b, 400, false),
				share("p2", c, 500, false)), t0,
			"repack(s1,a) repack(s2,a) drain(a)"},
		{"a share counts only on a gap of workers that take it back: spot workers take spot-eligible work",
			func() Snapshot {
				sp := one
				sp.Kind = PoolSpot
				s1 := share("s1", a, 300, true)
				s1.Retryable = false // not spot-eligible
				return on(sp, []Worker{a, b}, s1, share("p1", b, 400, false))
			}(), t0, ""},
		{"two moved shares never count on one gap: how they pack depends on the order they come back in",
			on(one, []Worker{a, b}, share("s1", a, 300, true), share("s2", a, 200, true), share("p1", b, 400, false)), t0, ""},
		{"shares filling more than half a GPU move when every one fits a gap: they take no free slot",
			on(one, []Worker{a, b, c}, share("s1", a, 300, true), share("s2", a, 300, true), share("p1", b, 100, false),
				share("p2", c, 300, false)), t0,
			"repack(s1,a) repack(s2,a) drain(a)"},
		{"over half its slots, a worker stays if a share would need a free slot",
			on(four, []Worker{o1, o2}, share("s1", o1, 600, true), share("s2", o1, 600, true), share("s3", o1, 600, true),
				share("s4", o1, 600, true), whole("n1", o2), share("p1", o2, 400, false)), t0, ""},
		{"a share that cannot checkpoint pins its GPU",
			on(one, []Worker{a, b}, share("s1", a, 200, true), share("p0", a, 100, false), share("p1", b, 400, false)), t0, ""},
		{"every share must fit some gap: one GPU has no free slot for the rest",
			on(one, []Worker{a, b}, share("s1", a, 300, true), share("s2", a, 100, true), share("p1", b, 700, false)), t0, ""},
		{"a gap is taken once: the second worker's share finds none left",
			on(one, []Worker{a, b, c}, share("s1", a, 600, true), share("s2", b, 600, true), share("p1", c, 400, false)), t0,
			"repack(s1,a) drain(a)"},
		{"of two workers of checkpointable shares, the emptier moves into the other's gap, which then stays",
			on(one, []Worker{a, b}, share("s1", a, 400, true), share("s2", b, 300, true)), t0,
			"repack(s2,b) drain(b)"},
		{"a share goes where it fills the gap best, which leaves room for the next",
			// First fit would put s1 beside p1, where s2 then has no room.
			on(one, []Worker{a, b, c, e}, share("s1", a, 300, true), share("p1", b, 500, false),
				share("p2", c, 700, false), share("s2", e, 500, true)), t0,
			"repack(s1,a) drain(a) repack(s2,e) drain(e)"},
		{"on a worker of several GPUs a share fills the room beside the shares of a full one",
			on(four, []Worker{o1, o2}, share("s1", o1, 300, true),
				whole("n1", o2), whole("n2", o2), whole("n3", o2), share("p1", o2, 500, false)), t0,
			"repack(s1,o1) drain(o1)"},
		{"shares summing to a GPU or more leave no room the policy is sure of",
			on(four, []Worker{o1, o2}, share("s1", o1, 300, true),
				whole("n1", o2), whole("n2", o2), share("p1", o2, 600, false), share("p2", o2, 600, false)), t0, ""},
		{"the GPUs a worker reports give its room GPU by GPU",
			// Apart on two GPUs, shares of 0.6 and 0.3 leave 0.4 and 0.7,
			// and every GPU is busy: their sum alone would promise 0.1.
			reports(on(four, []Worker{o1, o2}, share("s1", o1, 500, true),
				whole("n1", o2), whole("n2", o2), share("p1", o2, 600, false), share("p2", o2, 300, false)),
				"o2", 4, 600, 300), t0,
			"repack(s1,o1) drain(o1)"},
		{"a report that disagrees with the job records is set aside for their sum",
			// A heartbeat old: p2 started since, beside p1.
			reports(on(four, []Worker{o1, o2}, share("s1", o1, 350, true),
				whole("n1", o2), whole("n2", o2), whole("n3", o2), share("p1", o2, 600, false), share("p2", o2, 300, false)),
				"o2", 4, 600), t0, ""},
		{"a share that fits no gap takes a free slot",
			on(four, []Worker{o1, o2}, share("s1", o1, 800, true), whole("n1", o2), share("p1", o2, 500, false)), t0,
			"repack(s1,o1) drain(o1)"},
	})
}

// TestSharesQueuedIntoGaps covers rule 3's count of queued shares: into
// the room beside running shares, where no worker launches for them, and
// only where that room is sure.
func TestSharesQueuedIntoGaps(t *testing.T) {
	burst := jobs.ClassBurst
	one := elasticPool("od", PoolOnDemand, "eu", 1.0)
	one.SlotsPerWorker = 1
	spot := elasticPool("sp", PoolSpot, "eu", 0.3)
	spot.SlotsPerWorker = 1
	// The quota is above the high watermark: nothing is lent.
	fx := worker("f1", "fx", 10, 8)
	a := worker("a", "od", 1, 1)
	a.IdleSince = time.Time{}
	pinned := func(id string, milli int) Job {
		j := running(id, burst, a, ago(30*time.Minute))
		j.Share, j.Checkpointable = milli, false
		return j
	}
	q := func(id string, milli int) Job {
		j := queued(id, burst, QueueBurst, ago(time.Minute))
		j.Share = milli
		return j
	}
	snapOf := func(pools []Pool, js ...Job) Snapshot {
		return Snapshot{Config: DefaultConfig(), Pools: append([]Pool{fixedPool("fx", "eu")}, pools...), Workers: []Worker{fx, a}, Jobs: js}
	}
	leaving := pinned("l1", 400)
	leaving.Checkpointable, leaving.PendingAction = true, Migrate
	runCases(t, []planCase{
		{"a queued share that fits beside a running one launches nothing",
			snapOf([]Pool{one}, pinned("p1", 400), q("q1", 500)), t0, ""},
		{"nor on a cheaper pool without workers: the worker with room takes it first",
			snapOf([]Pool{one, spot}, pinned("p1", 400), q("q1", 500)), t0, ""},
		{"one too big for the room launches a worker",
			snapOf([]Pool{one}, pinned("p1", 400), q("q1", 700)), t0, "scale_up(od,1)"},
		{"a GPU whose share is leaving counts as a free slot, not as room beside it as well",
			snapOf([]Pool{one}, leaving, queued("q1", burst, QueueBurst, ago(time.Minute)), q("q2", 500)), t0, "scale_up(od,1)"},
	})
}

// A worker's report of its GPUs is used only where it pays for the room
// it claims: naming more GPUs than the worker has, it is set aside, and
// the plan is the one without it.
func TestShareReportClaimingMoreGPUsIsSetAside(t *testing.T) {
	burst := jobs.ClassBurst
	one := elasticPool("od", PoolOnDemand, "eu", 1.0)
	one.SlotsPerWorker = 1
	fx := worker("f1", "fx", 10, 8)
	a := worker("a", "od", 1, 1)
	a.IdleSince = time.Time{}
	p1 := running("p1", burst, a, ago(30*time.Minute))
	p1.Share, p1.Checkpointable = 600, false
	js := []Job{p1}
	for i := range 5 {
		j := queued(fmt.Sprintf("q%d", i), burst, QueueBurst, ago(time.Minute))
		j.Share = 800
		js = append(js, j)
	}
	without := Snapshot{Config: DefaultConfig(), Pools: []Pool{fixedPool("fx", "eu"), one}, Workers: []Worker{fx, a}, Jobs: js}
	forged := reports(without, "a", 1, 100, 100, 100, 100, 100, 100)
	want, got := summary(Decide(without, t0)), summary(Decide(forged, t0))
	if got != want || !strings.Contains(want, "scale_up(od,") {
		t.Fatalf("with a report of six GPUs on a one-GPU worker the plan is %q; want %q, as without it", got, want)
	}
}

// reports sets what worker id reports: the GPUs busy, and what shares
// use of each GPU they are on.
func reports(s Snapshot, id string, busy int, gpus ...int) Snapshot {
	for i := range s.Workers {
		if s.Workers[i].ID == id {
			s.Workers[i].Busy, s.Workers[i].SharedGPUs = busy, gpus
		}
	}
	return s
}

// TestRepackLandsAndReleases follows a repack through the harness: the
// job checkpoints, rule 3 places it on the other worker's free slot with
// no launch, and the emptied worker is released.
func TestRepackLandsAndReleases(t *testing.T) {
	od := elasticPool("od", PoolOnDemand, "eu", 1.0)
	fx := worker("f1", "fx", 10, 8)
	o1, o2 := worker("o1", "od", 4, 0), worker("o2", "od", 4, 0)
	b1 := running("b1", jobs.ClassBurst, o1, ago(30*time.Minute))
	n1 := running("n1", jobs.ClassBurst, o2, ago(30*time.Minute))
	n1.Checkpointable = false
	w := newWorld(t, snap([]Pool{fixedPool("fx", "eu"), od}, []Worker{fx, o1, o2}, b1, n1), 10*time.Second)
	got := w.run(3)
	want := []string{"repack(b1,o1) drain(o1)", "release(o1)", ""}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("plans %q; want %q", got, want)
		}
	}
	if j := w.job("b1"); !j.running() || j.Worker != "o2" {
		t.Fatalf("b1 is %s on %q; want running on o2", j.State, j.Worker)
	}
	for _, p := range w.plans {
		if p.Count(ScaleUp) > 0 {
			t.Fatalf("a worker launched for repacked work:\n%s", p)
		}
	}
}

// A worker whose only work is a share that fits beside another worker's
// share is repacked only if, once drained, its pool still holds the work
// counted on it: a draining worker counts against the pool's maximum, and
// the queued job that fit under it would make a cheaper pool launch.
func TestRepackKeepsThePoolsRoom(t *testing.T) {
	od := elasticPool("od", PoolOnDemand, "eu", 1.0)
	od.MaxWorkers = 3
	od2 := elasticPool("od2", PoolOnDemand, "eu", 2.0)
	od2.MaxWorkers = 1
	a, b, c := worker("a", "od", 4, 0), worker("b", "od", 4, 0), worker("c", "od", 4, 0)
	d := worker("d", "od", 4, 1)
	d.State = WorkerDraining
	share := func(id string, w Worker) Job {
		j := running(id, jobs.ClassBurst, w, ago(time.Hour))
		j.Share = 250
		return j
	}
	s := snap([]Pool{fixedPool("fx", "eu"), od, od2}, []Worker{worker("f1", "fx", 1, 1), a, b, c, d},
		share("s1", a), share("s2", b),
		running("w1", jobs.ClassCore, b, ago(time.Hour)), running("w2", jobs.ClassCore, b, ago(time.Hour)),
		running("w3", jobs.ClassCore, c, ago(time.Hour)), running("w4", jobs.ClassCore, c, ago(time.Hour)),
		running("w5", jobs.ClassCore, c, ago(time.Hour)),
		queued("q", jobs.ClassBurst, QueueBurst, ago(time.Minute)))
	runSteadyCases(t, []planCase{{"no repack that leaves queued work no room", s, t0, ""}}, summary)
}

// A share counts into room beside another worker's shares only if rule 3
// will look at that pool first next tick, after this tick's backlog and
// before it (a repacked job goes back ahead of work queued after it).
// Counted into room on od where a cheaper pool takes it first, it left
// that room looking free the next tick, and a second repack took it or
// the queued job found its slot gone.
func TestRepackSharesGoWhereRuleThreeLooksFirst(t *testing.T) {
	od := elasticPool("od", PoolOnDemand, "eu", 1.0)
	od.SlotsPerWorker = 1
	// snapshot: a cheaper pool of machines of size slots in region, its
	// up workers ws and od's one-GPU workers a, b and c, each running a
	// 250-thousandths share, checkpointable on a and c.
	snapshot := func(region string, size int, ws []Worker, more ...Job) Snapshot {
		cheap := elasticPool("cheap", PoolOnDemand, region, 0.5)
		cheap.SlotsPerWorker = size
		all := []Worker{worker("f1", "fx", 1, 1)}
		for _, w := range append(ws, worker("a", "od", 1, 1), worker("b", "od", 1, 1), worker("c", "od", 1, 1)) {
			w.IdleSince = time.Time{}
			all = append(all, w)
		}
		share := func(id, w string, ck bool) Job {
			j := running(id, jobs.ClassBurst, Worker{ID: w, Pool: "od"}, ago(time.Hour))
			j.Share, j.Checkpointable = 250, ck
			return j
		}
		return Snapshot{Config: DefaultConfig(), Pools: []Pool{fixedPool("fx", "eu"), cheap, od}, Workers: all,
			Jobs: append([]Job{share("s1", "a", true), share("p1", "b", false), share("s3", "c", true)}, more...)}
	}
	// A machine launching on the cheap pool for a share pinned to its
	// region: a moved share would pack beside it there.
	pinned := queued("q", jobs.ClassBurst, QueueBurst, ago(time.Minute))
	pinned.Share, pinned.Region = 250, "us"
	// A free slot on the cheap pool that this tick's backlog takes.
	c1 := worker("c1", "cheap", 2, 1)
	onC1 := running("w1", jobs.ClassBurst, c1, ago(time.Hour))
	onC1.Checkpointable = false
	runSteadyCases(t, []planCase{
		{"no repack into room rule 3 passes by", snapshot("us", 1, nil, pinned), t0, "scale_up(cheap,1)"},
		{"no repack into room the backlog's slot comes before",
			snapshot("eu", 2, []Worker{c1}, onC1, queued("q", jobs.ClassBurst, QueueBurst, ago(time.Minute))), t0, ""},
	}, summary)
}
