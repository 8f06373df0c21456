package policy

import (
	"reflect"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestPropertyScratchLeavesNoTrace holds an index that keeps deciding,
// with the working memory each Decide leaves to the next (scratch.go),
// to a fresh rebuild: tick after tick of a random snapshot, each plan
// applied before the next, the reused index plans exactly what a new one
// would. A map or list not emptied between ticks shows up here as a plan
// that remembers the last tick's placements, moves or demand.
func TestPropertyScratchLeavesNoTrace(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var s Snapshot
		if rapid.Bool().Draw(t, "sized") {
			s = genSizedSnapshot(t)
		} else {
			s = genSnapshot(t)
		}
		ix := IndexOf(s)
		now := t0
		for tick := range rapid.IntRange(2, 5).Draw(t, "ticks") {
			got, want := ix.Decide(now), Decide(s, now)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("tick %d: the reused index plans\n%s\na fresh one\n%s", tick, got, want)
			}
			s = Apply(s, got, now)
			ix = rebuildInto(ix, s)
			now = now.Add(time.Duration(rapid.IntRange(1, 600).Draw(t, "seconds")) * time.Second)
		}
	})
}

// rebuildInto makes ix hold s by changes, keeping ix itself (and so its
// scratch): every job and worker of s put, those it no longer has removed.
func rebuildInto(ix *Index, s Snapshot) *Index {
	keepJobs, keepWorkers := map[string]bool{}, map[string]bool{}
	for _, j := range s.Jobs {
		keepJobs[j.ID] = true
		ix.PutJob(j)
	}
	for _, w := range s.Workers {
		keepWorkers[w.ID] = true
		ix.PutWorker(w)
	}
	old := ix.Snapshot()
	for _, j := range old.Jobs {
		if !keepJobs[j.ID] {
			ix.RemoveJob(j.ID)
		}
	}
	for _, w := range old.Workers {
		if !keepWorkers[w.ID] {
			ix.RemoveWorker(w.ID)
		}
	}
	ix.SetLaunches(s.Launches)
	return ix
}
