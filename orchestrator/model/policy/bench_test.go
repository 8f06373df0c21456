package policy

import (
	"fmt"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// benchSnapshot is a busy installation: 100 fixed workers of 8 slots, 100
// elastic workers of 4 slots over three pools, 10,000 jobs of which 1,100
// run, with a little of everything in flight.
func benchSnapshot() Snapshot {
	s := Snapshot{Config: DefaultConfig(), Pools: []Pool{
		fixedPool("fx", "eu"),
		elasticPool("spot-eu", PoolSpot, "eu", 0.3),
		elasticPool("od-eu", PoolOnDemand, "eu", 1.0),
		elasticPool("od-us", PoolOnDemand, "us", 0.8),
	}}
	for i := range s.Pools[1:] {
		s.Pools[1+i].MaxWorkers = 200
	}
	s.Config.CoreOverflow = true
	for i := range 200 {
		pool, slots := "fx", 8
		if i >= 100 {
			pool, slots = s.Pools[1+i%3].Name, 4
		}
		s.Workers = append(s.Workers, Worker{ID: fmt.Sprintf("w%03d", i), Pool: pool, Slots: slots, State: WorkerUp, StartedAt: ago(time.Duration(i) * time.Minute)})
	}
	n := 0
	add := func(j Job) {
		j.ID = fmt.Sprintf("j%05d", n)
		j.Checkpointable, j.Retryable = j.PendingAction == Migrate || n%3 != 0, n%5 != 0
		if n%17 == 0 {
			j.Region = "eu"
		}
		s.Jobs = append(s.Jobs, j)
		n++
	}
	for wi := range s.Workers {
		w := &s.Workers[wi]
		for k := range w.Slots - wi%2 {
			class := jobs.ClassBurst
			if w.Pool == "fx" && k < 6 {
				class = jobs.ClassCore
			}
			j := running("", class, *w, ago(time.Duration(n%90)*time.Minute))
			if n%41 == 0 && class == jobs.ClassBurst && w.Pool != "fx" {
				j.Checkpointable, j.PendingAction = true, Migrate
			}
			add(j)
			w.Busy++
		}
		if w.Busy == 0 {
			w.IdleSince = ago(time.Hour)
		}
	}
	for n < 10000 {
		switch {
		case n%20 == 0:
			add(queued("", jobs.ClassCore, QueueCore, ago(time.Duration(n%60)*time.Minute)))
		case n%7 == 0:
			add(queued("", jobs.ClassBurst, QueueLoan, ago(time.Duration(n%60)*time.Minute)))
		default:
			add(queued("", jobs.ClassBurst, QueueBurst, ago(time.Duration(n%60)*time.Minute)))
		}
	}
	s.Launches = []Launch{{Pool: "spot-eu", Count: 5, RequestedAt: ago(3 * time.Minute)}}
	return s
}

func BenchmarkDecide(b *testing.B) {
	s := benchSnapshot()
	mustValid(b, s)
	if len(s.Jobs) != 10000 || len(s.Workers) != 200 {
		b.Fatalf("snapshot has %d jobs and %d workers", len(s.Jobs), len(s.Workers))
	}
	b.ReportAllocs()
	for b.Loop() {
		Decide(s, t0)
	}
}

// placeBenchSnapshot is a GPU installation: 100 fixed workers and 100
// on-demand workers of 8 slots, half full, and 10,000 queued jobs of 1,
// 2, 4 and 8 slots (one in twenty a gang of 2 to 4 members), a third of
// them core. Most are sized, so rule 8 walks them all.
func placeBenchSnapshot() Snapshot {
	s := Snapshot{Config: DefaultConfig(), Pools: []Pool{
		fixedPool("fx", "eu"),
		elasticPool("od-eu", PoolOnDemand, "eu", 1.0),
	}}
	s.Pools[1].MaxWorkers, s.Pools[1].SlotsPerWorker = 150, 8
	n := 0
	for i := range 200 {
		pool := "fx"
		if i >= 100 {
			pool = "od-eu"
		}
		w := Worker{ID: fmt.Sprintf("w%03d", i), Pool: pool, Slots: 8, State: WorkerUp, StartedAt: ago(time.Hour)}
		k := []int{1, 2, 4}[i%3]
		for used := 0; used+k <= 4; used += k {
			class := jobs.ClassBurst
			if pool == "fx" && i%2 == 0 {
				class = jobs.ClassCore
			}
			j := running(fmt.Sprintf("r%05d", n), class, w, ago(time.Duration(n%90)*time.Minute))
			j.Slots = k
			s.Jobs = append(s.Jobs, j)
			w.Busy += k
			n++
		}
		s.Workers = append(s.Workers, w)
	}
	for q := range 10000 {
		class, queue := jobs.ClassBurst, QueueBurst
		switch {
		case q%3 == 0:
			class, queue = jobs.ClassCore, QueueCore
		case q%7 == 0:
			queue = QueueLoan
		}
		j := queued(fmt.Sprintf("q%05d", q), class, queue, ago(time.Duration(q%600)*time.Second))
		j.Slots = []int{1, 2, 4, 8}[q%4]
		if q%20 == 0 {
			j.Slots, j.Replicas = 2, 2+q%3
		}
		s.Jobs = append(s.Jobs, j)
	}
	return s
}

func BenchmarkPlaceTick(b *testing.B) {
	s := placeBenchSnapshot()
	mustValid(b, s)
	p := Decide(s, t0)
	if p.Count(Place) == 0 {
		b.Fatalf("nothing placed:\n%s", p)
	}
	b.ReportAllocs()
	for b.Loop() {
		Decide(s, t0)
	}
	b.ReportMetric(float64(p.Count(Place)), "places/op")
}

// BenchmarkPlaceIndexTick is the same installation kept in an index: the
// tick the simulator pays.
func BenchmarkPlaceIndexTick(b *testing.B) {
	s := placeBenchSnapshot()
	ix := IndexOf(s)
	j := s.Jobs[len(s.Jobs)-1]
	b.ReportAllocs()
	for b.Loop() {
		j.QueuedAt = j.QueuedAt.Add(time.Millisecond)
		ix.PutJob(j)
		ix.Decide(t0)
	}
}
