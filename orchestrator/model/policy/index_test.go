package policy

import (
	"reflect"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"pgregory.net/rapid"
)

// TestPropertyIndexUpkeep builds an index by changes (a random snapshot's
// workers and jobs put in a random order, interleaved with puts of other
// versions and removals that are later undone) and checks it against the
// full rebuild from the same snapshot: the same structures (Index.Check),
// the same records and the same plan.
func TestPropertyIndexUpkeep(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genSnapshot(t)
		ix := NewIndex(s.Config, s.Pools)
		type change struct {
			job    *Job
			worker *Worker
		}
		var changes []change
		for i := range s.Jobs {
			changes = append(changes, change{job: &s.Jobs[i]})
		}
		for i := range s.Workers {
			changes = append(changes, change{worker: &s.Workers[i]})
		}
		changes = rapid.Permutation(changes).Draw(t, "order")
		for i, c := range changes {
			switch {
			case c.job != nil:
				// A stale version first, sometimes: a change that a later
				// one overwrites must leave no trace.
				if rapid.Bool().Draw(t, "stale") {
					old := *c.job
					old.State, old.Queue, old.QueuedAt = jobs.StateQueued, QueueBurst, old.QueuedAt.Add(-time.Minute)
					old.PendingAction, old.Worker = "", ""
					ix.PutJob(old)
					if rapid.Bool().Draw(t, "remove") {
						ix.RemoveJob(old.ID)
					}
				}
				ix.PutJob(*c.job)
			default:
				if rapid.Bool().Draw(t, "worker_away") {
					// A worker that goes and comes back keeps its jobs.
					ix.PutWorker(*c.worker)
					ix.RemoveWorker(c.worker.ID)
				}
				ix.PutWorker(*c.worker)
			}
			if i%7 == 0 {
				if err := ix.Check(); err != nil {
					t.Fatalf("after %d changes: %v", i+1, err)
				}
			}
		}
		ix.SetLaunches(s.Launches)
		if err := ix.Check(); err != nil {
			t.Fatal(err)
		}
		full := IndexOf(s)
		if got, want := ix.Snapshot(), full.Snapshot(); !reflect.DeepEqual(got, want) {
			t.Fatalf("records differ:\n got %+v\nwant %+v", got, want)
		}
		if got, want := ix.Decide(t0), Decide(s, t0); !reflect.DeepEqual(got, want) {
			t.Fatalf("plans differ:\n got %s\nwant %s", got, want)
		}
		// Taking everything out leaves nothing behind.
		for _, j := range s.Jobs {
			ix.RemoveJob(j.ID)
		}
		for _, w := range s.Workers {
			ix.RemoveWorker(w.ID)
		}
		if n, w := ix.Len(); n != 0 || w != 0 || ix.toCore != 0 || ix.toLoan != 0 || len(ix.toOverflow) != 0 ||
			len(ix.queued) != 0 || len(ix.redirected) != 0 || len(ix.orphans) != 0 || ix.knownHomes != 0 ||
			len(ix.teamBound) != 0 || len(ix.held) != 0 {
			t.Fatalf("an emptied index holds %d jobs, %d workers and counts %+v", n, w, ix.state())
		}
	})
}

// TestJobSetOrder keeps a queue set through inserts and removals that
// split and empty chunks, checking its order against a sorted list.
func TestJobSetOrder(t *testing.T) {
	var set jobSet
	js := make([]*Job, 3000)
	for i := range js {
		// Many equal queue times, so the ID decides often.
		js[i] = &Job{ID: string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676)), QueuedAt: t0.Add(time.Duration(i*7919%211) * time.Second)}
		set.insert(js[i])
	}
	for i := 0; i < len(js); i += 3 {
		if !set.remove(js[i]) {
			t.Fatalf("job %s not found", js[i].ID)
		}
	}
	if set.remove(js[0]) {
		t.Fatal("a removed job was removed again")
	}
	var prev *Job
	n := 0
	for j := range set.all() {
		if prev != nil && byQueueOrder(prev, j) >= 0 {
			t.Fatalf("%s before %s", prev.ID, j.ID)
		}
		prev, n = j, n+1
	}
	if n != set.n || n != 2000 {
		t.Fatalf("walked %d jobs, set counts %d", n, set.n)
	}
	back := 0
	for j := range set.backward() {
		_ = j
		back++
	}
	if back != n {
		t.Fatalf("backward walked %d of %d", back, n)
	}
}

// BenchmarkIndexDecide is BenchmarkDecide's installation kept in an index,
// as the simulator keeps it: a tick that changes one job and decides. The
// rebuild BenchmarkDecide pays is what this saves.
func BenchmarkIndexDecide(b *testing.B) {
	s := benchSnapshot()
	ix := IndexOf(s)
	j := s.Jobs[len(s.Jobs)-1]
	b.ReportAllocs()
	for b.Loop() {
		j.QueuedAt = j.QueuedAt.Add(time.Millisecond)
		ix.PutJob(j)
		ix.Decide(t0)
	}
}
