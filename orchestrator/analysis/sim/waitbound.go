package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// waitBound is Options.StopOverP95 at work: it counts, per class, the jobs
// that are sure to wait longer than the bound (started late, or still not
// started a bound after their submission) and says when there are more of
// them than a p95 within the bound allows. The test is exact, not a guess:
// the run is stopped only when finishing it could not change the verdict.
type waitBound struct {
	bound   time.Duration
	scan    int     // next trace job (by submission) not yet looked at
	late    [2]int  // by class: 0 burst, 1 core
	allowed [2]int  // by class: most late jobs with p95 still within bound
	counted []bool  // per trace job: already counted late
	total   [2]int  // by class: jobs in the trace
	reason  string  // why the run stopped; empty while it runs
	classOf []uint8 // per trace job: its class index
}

func classIndex(c jobs.Class) uint8 {
	if c == jobs.ClassCore {
		return 1
	}
	return 0
}

func newWaitBound(s *sim) *waitBound {
	if s.stopOver <= 0 {
		return nil
	}
	b := &waitBound{bound: s.stopOver, counted: make([]bool, len(s.tr.Jobs)), classOf: make([]uint8, len(s.tr.Jobs))}
	for i, j := range s.tr.Jobs {
		c := classIndex(j.Class)
		b.classOf[i] = c
		b.total[c]++
	}
	for c, n := range b.total {
		if n == 0 {
			// No jobs of the class: no wait of it can miss the bound.
			b.allowed[c] = math.MaxInt
			continue
		}
		// percentiles takes the p95 at rank ceil(0.95 n): it exceeds the
		// bound once n - rank + 1 waits do.
		rank := max(int(0.95*float64(n)+0.999999999), 1)
		b.allowed[c] = n - rank
	}
	return b
}

// started counts a job whose last slot started after waiting wait.
func (b *waitBound) started(job int32, wait time.Duration) {
	if b == nil || wait <= b.bound || b.counted[job] {
		return
	}
	b.counted[job] = true
	b.late[b.classOf[job]]++
}

// check counts the arrived jobs that have waited past the bound without
// starting and reports whether the run can stop. Jobs are looked at once,
// in submission order, so a whole run costs O(jobs) here.
func (b *waitBound) check(s *sim) bool {
	if b == nil {
		return false
	}
	if b.reason != "" {
		return true
	}
	for b.scan < s.next && s.now-s.tr.Jobs[b.scan].Submit > b.bound {
		if s.jobUnstarted[b.scan] > 0 && !b.counted[b.scan] {
			b.counted[b.scan] = true
			b.late[b.classOf[b.scan]]++
		}
		b.scan++
	}
	for c, name := range []string{"burst", "core"} {
		if b.late[c] > b.allowed[c] {
			b.reason = fmt.Sprintf("stopped at %s: %d of %d %s jobs waited longer than %s, so their p95 wait exceeds it",
				s.now.Round(time.Second), b.late[c], b.total[c], name, b.bound)
			return true
		}
	}
	return false
}
