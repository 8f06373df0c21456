package planner

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/sim"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// Progress is what a plan reports after each simulation: how many ran, how
// many more the search expects at most, and the time that leaves.
type Progress struct {
	Stage    string
	Done     int
	Expected int // Done plus the most the search may still run
	Elapsed  time.Duration
	// Left estimates the time still needed from the mean time per
	// simulation so far, with every core busy. Reports come one at a time.
	Left time.Duration
}

// evaluator runs candidates through the simulator on one trace, each at
// most once, several at a time.
type evaluator struct {
	tr       trace.Trace
	whole    trace.Trace // all-fixed is sized to the whole history's peak
	base     sim.Options
	target   time.Duration
	parallel int
	memo     map[Candidate]Point
	order    []Candidate // in the order first simulated
	// shapes set the least quota each candidate is searched at (floor).
	shapes Shapes

	// Shared with every evaluator of one plan.
	clock *runClock
}

// runClock counts simulations across the evaluators of one plan, for
// progress reports.
type runClock struct {
	mu       sync.Mutex
	start    time.Time
	now      func() time.Time
	done     int
	expected int
	busy     time.Duration // summed wall time of the simulations
	stage    string
	report   func(Progress)
	parallel int
}

// expect names the stage now running and the most simulations it may
// still add. The expected total never falls below a bound set for the
// whole run (Make sets one up front), so "at most" holds across stages;
// simulations a stage finds in the cache make it an overestimate.
func (c *runClock) expect(stage string, more int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stage = stage
	c.expected = max(c.expected, c.done+more)
}

func (c *runClock) finished(took time.Duration) {
	c.mu.Lock()
	c.done++
	c.busy += took
	c.expected = max(c.expected, c.done)
	p := Progress{Stage: c.stage, Done: c.done, Expected: c.expected, Elapsed: c.now().Sub(c.start)}
	mean := c.busy / time.Duration(c.done)
	p.Left = mean * time.Duration(c.expected-c.done) / time.Duration(max(c.parallel, 1))
	// Reported under the lock, so reports arrive one at a time and in order.
	if c.report != nil {
		c.report(p)
	}
	c.mu.Unlock()
}

func newEvaluator(tr, whole trace.Trace, base sim.Options, target time.Duration, parallel int, clock *runClock) *evaluator {
	if parallel <= 0 {
		parallel = runtime.GOMAXPROCS(0)
	}
	return &evaluator{tr: tr, whole: whole, base: base, target: target, parallel: parallel,
		memo: map[Candidate]Point{}, clock: clock}
}

// eval returns the points of cs, simulating those not seen before in
// parallel. Results are deterministic (sim is), so the order runs finish in
// changes nothing.
func (e *evaluator) eval(cs ...Candidate) ([]Point, error) {
	var todo []Candidate
	queued := map[Candidate]bool{}
	for _, c := range cs {
		if _, ok := e.memo[c]; !ok && !queued[c] {
			queued[c] = true
			todo = append(todo, c)
		}
	}
	pts := make([]Point, len(todo))
	errs := make([]error, len(todo))
	sem := make(chan struct{}, e.parallel)
	var wg sync.WaitGroup
	for i, c := range todo {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			start := time.Now()
			o := c.options(e.base, e.whole)
			o.StopOverP95 = e.target
			r, err := sim.Run(e.tr, o)
			took := time.Since(start)
			if e.clock != nil {
				e.clock.finished(took)
			}
			if err != nil {
				errs[i] = fmt.Errorf("planner: %s: %w", c, err)
				return
			}
			v := judge(r, e.target)
			pts[i] = Point{Candidate: c, Result: r, Verdict: v, Took: took}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i, c := range todo {
		e.memo[c] = pts[i]
		e.order = append(e.order, c)
	}
	out := make([]Point, len(cs))
	for i, c := range cs {
		out[i] = e.memo[c]
	}
	return out, nil
}

// points returns every point simulated, in the order first simulated.
func (e *evaluator) points() []Point {
	out := make([]Point, len(e.order))
	for i, c := range e.order {
		out[i] = e.memo[c]
	}
	return out
}

// best is the best point simulated so far (by better), and false if none.
func (e *evaluator) best(keep func(Point) bool) (Point, bool) {
	var b Point
	found := false
	for _, c := range e.order {
		p := e.memo[c]
		if keep != nil && !keep(p) {
			continue
		}
		if !found || better(p, b) < 0 {
			b, found = p, true
		}
	}
	return b, found
}

// floor is the least quota c can run every job at: below it a job that no
// elastic machine holds waits for ever. Strategies other than hybrid
// have their quota set by what they are.
func (e *evaluator) floor(c Candidate) int {
	if c.Strategy != StrategyHybrid {
		return 0
	}
	return e.shapes.Floor(c.CoreOverflow, c.Watermarks.High)
}

// lift raises c's quota to its floor.
func (e *evaluator) lift(c Candidate) Candidate {
	c.FixedSlots = max(c.FixedSlots, e.floor(c))
	return c
}
