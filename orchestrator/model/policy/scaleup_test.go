package policy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func TestScaleUp(t *testing.T) {
	burst := jobs.ClassBurst
	fxp, fxw := fixedWith(10, 10) // fixed is full: nothing is lent
	sp := elasticPool("sp", PoolSpot, "eu", 0.3)
	od := elasticPool("od", PoolOnDemand, "eu", 1.0)
	pools := append(fxp, sp, od)

	n := func(prefix string, k int, edit func(*Job)) []Job {
		var out []Job
		for i := range k {
			j := queued(fmt.Sprintf("%s%02d", prefix, i), burst, QueueBurst, ago(time.Minute))
			if edit != nil {
				edit(&j)
			}
			out = append(out, j)
		}
		return out
	}
	plain := func(j *Job) { j.Checkpointable = false }
	preempted := func(j *Job) { j.SpotPreemptions = 3 }
	with := func(ws []Worker, js ...[]Job) Snapshot {
		var all []Job
		for _, g := range js {
			all = append(all, g...)
		}
		return snap(pools, append(append([]Worker(nil), fxw...), ws...), all...)
	}

	s1 := worker("s1", "sp", 4, 0)
	s2 := worker("s2", "sp", 4, 0)
	s2.State = WorkerStarting
	busyOnS1 := []Job{running("r1", burst, s1, ago(time.Minute)), running("r2", burst, s1, ago(time.Minute)), running("r3", burst, s1, ago(time.Minute))}
	launched := func(s Snapshot, at time.Time) Snapshot {
		s.Launches = []Launch{{Pool: "sp", Count: 1, RequestedAt: at}}
		return s
	}
	small := func(s Snapshot, max int) Snapshot {
		s.Pools = append([]Pool(nil), s.Pools...)
		for i := range s.Pools {
			if s.Pools[i].Name == "sp" {
				s.Pools[i].MaxWorkers = max
			}
		}
		return s
	}
	sd := worker("sd", "sp", 4, 0)
	sd.State = WorkerDraining
	onDraining := []Job{running("d1", burst, sd, ago(time.Minute)), running("d2", burst, sd, ago(time.Minute))}

	noFallback := launched(with(nil, n("q", 4, nil)), ago(time.Hour))
	noFallback.Config.SpotFallbackAfter = 0

	runCases(t, []planCase{
		{"spot for checkpointable retryable work", with(nil, n("q", 6, nil)), t0, "scale_up(sp,2)"},
		{"on-demand for work that cannot resume", with(nil, n("q", 5, plain)), t0, "scale_up(od,2)"},
		{"on-demand after too many spot reclaims", with(nil, n("q", 3, preempted)), t0, "scale_up(od,1)"},
		{"mixed work splits", with(nil, n("q", 4, nil), n("p", 1, plain)), t0, "scale_up(od,1) scale_up(sp,1)"},
		{"running, starting and launching count as supply", launched(with([]Worker{s1, s2}, busyOnS1, n("q", 8, nil)), t0), t0, ""},
		{"only the shortfall is launched", launched(with([]Worker{s1, s2}, busyOnS1, n("q", 10, nil)), t0), t0, "scale_up(sp,1)"},
		{"clamped to max, the rest spills to the next pool", small(with(nil, n("q", 12, nil)), 2), t0, "scale_up(od,1) scale_up(sp,2)"},
		{"draining workers count against max", small(with([]Worker{sd}, onDraining, n("q", 8, nil)), 2), t0, "scale_up(od,1) scale_up(sp,1)"},
		{"work finishing on a draining worker is not replaced", with([]Worker{sd}, onDraining), t0, ""},
		{"no elastic pool: work waits", snap(fxp, fxw, n("q", 3, nil)...), t0, ""},
		{"a spot launch inside its fallback time covers the work", launched(with(nil, n("q", 4, nil)), ago(10*time.Minute-time.Second)), t0, ""},
		{"an unfilled spot launch falls back to on-demand", launched(with(nil, n("q", 4, nil)), ago(10*time.Minute)), t0, "scale_up(od,1)"},
		{"fallback disabled", noFallback, t0, ""},
	})
}

func TestScaleUpRegions(t *testing.T) {
	burst := jobs.ClassBurst
	fxp, fxw := fixedWith(4, 4)
	pools := append(fxp, elasticPool("od-eu", PoolOnDemand, "eu", 1.0), elasticPool("od-us", PoolOnDemand, "us", 0.8))
	job := func(id, region string) Job {
		j := queued(id, burst, QueueBurst, ago(time.Minute))
		j.Region = region
		return j
	}
	runCases(t, []planCase{
		{"pinned", snap(pools, fxw, job("a", "eu")), t0, "scale_up(od-eu,1)"},
		{"cheapest unless pinned", snap(pools, fxw, job("b", "")), t0, "scale_up(od-us,1)"},
		// A machine of 4 at 1.0 a slot, not that and one at 0.8 (growCost).
		{"unpinned work shares the machine a pinned job launches", snap(pools, fxw, job("a", "eu"), job("b", "")), t0, "scale_up(od-eu,1)"},
		{"pinned where no pool is", snap(pools, fxw, job("a", "ap")), t0, ""},
	})
	// An on-demand stock-out in the cheaper region: after the fallback time
	// unpinned work goes to the other region; work pinned there waits.
	stocked := func(jobsIn ...Job) Snapshot {
		s := snap(pools, fxw, jobsIn...)
		s.Launches = []Launch{{Pool: "od-us", Count: 1, RequestedAt: ago(time.Hour)}}
		return s
	}
	runCases(t, []planCase{
		{"stock-out falls back to another region", stocked(job("a", ""), job("b", "")), t0, "scale_up(od-eu,1)"},
		{"a pin to the stocked-out region waits", stocked(job("a", "us"), job("b", "us")), t0, ""},
	})
}

func TestScaleUpReasonNamesFallback(t *testing.T) {
	fxp, fxw := fixedWith(1, 1)
	s := snap(append(fxp, elasticPool("sp", PoolSpot, "eu", 0.3), elasticPool("od", PoolOnDemand, "eu", 1.0)), fxw,
		queued("q", jobs.ClassBurst, QueueBurst, ago(time.Minute)))
	s.Launches = []Launch{{Pool: "sp", Count: 1, RequestedAt: ago(11 * time.Minute)}}
	p := Decide(s, t0)
	if len(p.Actions) != 1 || !strings.Contains(p.Actions[0].Reason, "1 spot-eligible jobs fell back") {
		t.Fatalf("want one on-demand scale-up naming the fallback, got\n%s", p)
	}
}

// Queued jobs that share a GPU need the machines their shares fill, not a
// slot each: eight quarter-GPU jobs fill two GPUs.
func TestScaleUpCountsSharesPacked(t *testing.T) {
	fxp, fxw := fixedWith(10, 10) // fixed is full: nothing is lent
	od := elasticPool("od", PoolOnDemand, "eu", 1.0)
	od.SlotsPerWorker = 1
	var js []Job
	for i := range 8 {
		j := queued(fmt.Sprintf("q%02d", i), jobs.ClassBurst, QueueBurst, ago(time.Minute))
		j.Checkpointable, j.Share = false, 250
		js = append(js, j)
	}
	runCases(t, []planCase{
		{"eight quarters fill two GPUs", snap(append(fxp, od), fxw, js...), t0, "scale_up(od,2)"},
		{"a ninth opens a third", snap(append(fxp, od), fxw, append(js, func() Job {
			j := queued("q08", jobs.ClassBurst, QueueBurst, ago(time.Minute))
			j.Checkpointable, j.Share = false, 100
			return j
		}())...), t0, "scale_up(od,3)"},
	})
}

// Overflowed core shares count as packed on the ticks after the overflow
// too: eight quarters with two one-GPU machines launching need no more.
func TestOverflowedSharesStayPacked(t *testing.T) {
	fxp, fxw := fixedWith(10, 10)
	od := elasticPool("od", PoolOnDemand, "eu", 1.0)
	od.SlotsPerWorker = 1
	var js []Job
	for i := range 8 {
		j := queued(fmt.Sprintf("c%02d", i), jobs.ClassCore, QueueOverflow, ago(time.Hour))
		j.Pool, j.Share = "od", 250
		js = append(js, j)
	}
	s := snap(append(fxp, od), fxw, js...)
	s.Config.CoreOverflow = true
	s.Launches = []Launch{{Pool: "od", Count: 2, RequestedAt: ago(10 * time.Second)}}
	if p := Decide(s, t0); p.Count(ScaleUp) != 0 {
		t.Errorf("two machines launching for eight quarters: %s", p)
	}
}

// Scale-up grows a pool for a job only when one of its workers holds the
// job's CPUs and memory, where the pool declares them.
func TestScaleUpHonoursDeclaredCPUsAndMemory(t *testing.T) {
	fxp, fxw := fixedWith(10, 10)
	small := elasticPool("small", PoolOnDemand, "eu", 1.0)
	small.CPUs, small.Memory = 8, 32<<30
	big := elasticPool("big", PoolOnDemand, "eu", 2.0)
	big.CPUs, big.Memory = 64, 512<<30
	j := queued("j1", jobs.ClassBurst, QueueBurst, ago(time.Minute))
	j.Checkpointable, j.CPUs, j.Memory = false, 16, 64<<30
	runCases(t, []planCase{
		{"too many CPUs for the cheaper pool", snap(append(fxp, small, big), fxw, j), t0, "scale_up(big,1)"},
		{"no pool holds it", snap(append(fxp, small), fxw, j), t0, ""},
	})
}
