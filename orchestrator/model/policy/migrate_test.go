package policy

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func TestMigrateAndDrain(t *testing.T) {
	burst := jobs.ClassBurst
	sp := elasticPool("sp", PoolSpot, "eu", 0.3)
	od := elasticPool("od", PoolOnDemand, "eu", 1.0)
	pools := []Pool{fixedPool("fx", "eu"), sp, od}
	fx := func(busy int) []Worker { return []Worker{worker("f1", "fx", 10, busy)} }
	s1 := worker("s1", "sp", 4, 0)
	o1 := worker("o1", "od", 4, 0)
	run := func(id string, w Worker, age time.Duration, edit func(*Job)) Job {
		j := running(id, burst, w, ago(age))
		if edit != nil {
			edit(&j)
		}
		return j
	}
	plain := func(j *Job) { j.Checkpointable = false }
	pinUS := func(j *Job) { j.Region = "us" }
	overflowed := func(j *Job) { j.Class = jobs.ClassCore; j.Checkpointable = true }
	q := func(id string) Job { return queued(id, burst, QueueBurst, ago(time.Minute)) }
	on := func(busy int, ws []Worker, js ...Job) Snapshot { return snap(pools, append(fx(busy), ws...), js...) }

	mixed := []Job{run("m1", s1, 3*time.Minute, nil), run("m2", s1, time.Minute, nil), run("m3", s1, 2*time.Minute, nil), run("n1", s1, time.Minute, plain)}
	runCases(t, []planCase{
		{"below low: checkpointable work moves, the rest finishes on a drained worker",
			on(1, []Worker{s1}, mixed...), t0, "migrate(m2,s1) migrate(m3,s1) migrate(m1,s1) drain(s1)"},
		{"lends first, then migrates up to high",
			on(2, []Worker{s1}, q("a"), q("b"), q("c"), q("d"), run("m1", s1, 2*time.Minute, nil), run("m2", s1, time.Minute, nil)), t0,
			"lend(a) lend(b) lend(c) lend(d) migrate(m2,s1) drain(s1)"},
		{"the dearest capacity empties first",
			on(1, []Worker{s1, o1}, run("m1", s1, time.Minute, nil), run("m2", o1, time.Hour, nil)), t0,
			"migrate(m2,o1) migrate(m1,s1) drain(o1) drain(s1)"},
		{"overflowed core goes home to core first",
			on(3, []Worker{o1}, run("m1", o1, time.Minute, nil), run("k1", o1, time.Hour, overflowed)), t0,
			"migrate(k1,o1) migrate(m1,o1) drain(o1)"},
		{"a pinned job stays out of foreign fixed quota",
			on(1, []Worker{s1}, run("m1", s1, time.Minute, pinUS)), t0, "drain(s1)"},
		{"a drained pool keeps room for its queued work",
			func() Snapshot {
				s := on(7, []Worker{s1}, run("n1", s1, time.Minute, plain), q("a"), q("b"))
				s.Config.Low = 0.84 // cool, but fixed takes only one more: b stays for spot
				s.Config.High = 0.85
				return s
			}(), t0, "lend(a)"},
		{"between the watermarks nothing migrates or drains",
			on(5, []Worker{s1}, mixed...), t0, ""},
		{"zero fixed slots never counts as cool",
			snap(pools[1:], []Worker{s1}, mixed...), t0, ""},
	})
}

// TestMigrateSendsOverflowedCoreHome: an overflowed checkpointable core job
// running on on-demand goes back to core, never to loan, once fixed cools.
func TestMigrateSendsOverflowedCoreHome(t *testing.T) {
	od := elasticPool("od", PoolOnDemand, "", 1.0)
	o1 := worker("o1", "od", 4, 0)
	k := running("k1", jobs.ClassCore, o1, ago(time.Hour))
	k.Checkpointable, k.Queue, k.Pool = true, QueueOverflow, "od"
	s := snap([]Pool{fixedPool("fx", ""), od}, []Worker{worker("f1", "fx", 10, 1), o1}, k)
	s.Config.CoreOverflow = true
	var got []Action
	for _, a := range Decide(s, t0).Actions {
		if a.Kind == Migrate {
			got = append(got, a)
		}
	}
	if len(got) != 1 || got[0].Job != "k1" || got[0].Queue != QueueCore || got[0].Rule != 4 {
		t.Fatalf("migrations %v, want k1 -> core by rule 4", got)
	}
}
