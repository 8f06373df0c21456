package policy

import (
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
		{"workers of one slot are never repacked",
			func() Snapshot {
				one := od
				one.SlotsPerWorker = 1
				a, b := worker("a", "od", 1, 0), worker("b", "od", 1, 0)
				return snap([]Pool{fixedPool("fx", "eu"), one}, []Worker{fx, a, b}, ck("b1", a))
			}(), t0, "release(b)"},
	})
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
