package cli

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/queues"
)

// scenarioTally watches the events of `ballast dev --scenario` so that the
// demo says what the policy did as it happens, the first time each kind of
// move shows (scale-up, lending, reclaim), and sums it up at the end. It
// reads events only: they are what the demo is about, and a lost one makes
// a count low, never a wrong move.
type scenarioTally struct {
	say          func(format string, args ...any)
	elasticPools map[string]bool

	mu        sync.Mutex
	launches  map[string]int // elastic workers up, by pool
	releases  int            // elastic workers that drained and stopped
	lent      int            // burst deliveries moved to fixed capacity
	reclaims  int            // borrowed attempts stopped for core work
	coreWaits []float64      // seconds each core attempt waited to start
	announced map[string]bool
}

func newScenarioTally(say func(format string, args ...any), elasticPools map[string]bool) *scenarioTally {
	return &scenarioTally{say: say, elasticPools: elasticPools, launches: map[string]int{}, announced: map[string]bool{}}
}

// first reports whether phase is seen for the first time.
func (t *scenarioTally) first(phase string) bool {
	if t.announced[phase] {
		return false
	}
	t.announced[phase] = true
	return true
}

// observe counts one event and announces the phase it opens, if any.
func (t *scenarioTally) observe(ev events.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case ev.Type == events.TypeWorkerUp:
		info, _ := events.ParseWorkerInfo(ev)
		pool := info.Pool
		if !t.elasticPools[pool] {
			return
		}
		t.launches[pool]++
		if t.first("scale-up") {
			t.say("scale-up: the policy launched %s worker %s for work the fixed pool cannot take", pool, ev.Worker)
		}
	case ev.Type == events.TypeWorkerStopped:
		if info, _ := events.ParseWorkerInfo(ev); t.elasticPools[info.Pool] {
			t.releases++
			if t.first("drain") {
				t.say("drain: the spike is served; idle %s worker %s was released", info.Pool, ev.Worker)
			}
		}
	case ev.Type == events.TypeJobMoved && ev.Queue == string(queues.QueueLoan):
		t.lent++
		if t.first("lending") {
			t.say("lending: burst job %s moved to idle fixed slots before it ran (%s)", ev.JobID, ev.Reason)
		}
	case ev.Type == events.TypeJobRequeued && strings.HasPrefix(ev.Reason, "preempted: reclaim"):
		t.reclaims++
		if t.first("reclaim") {
			t.say("reclaim: core work takes back the fixed slot of burst job %s, which checkpointed and waits again in %s", ev.JobID, dash(ev.Queue))
		}
	case ev.Type == events.TypeJobRunning && events.JobClass(ev) == "core":
		if s, ok := events.ParseJobStart(ev); ok && s.HasWait {
			t.coreWaits = append(t.coreWaits, s.Wait.Seconds())
		}
	}
}

// drained announces, once, that elastic workers are being released, for
// when their worker.stopped events are missing (a worker killed, not
// drained).
func (t *scenarioTally) drained(left int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.first("drain") {
		t.say("drain: the spike is served; idle elastic workers are released (%d left)", left)
	}
}

// summary is the demo's last line: what the policy did and what it cost.
// cost is "" when the cost could not be read.
func (t *scenarioTally) summary(cost string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	total := 0
	var pools []string
	for _, p := range slices.Sorted(maps.Keys(t.launches)) {
		total += t.launches[p]
		pools = append(pools, fmt.Sprintf("%s %d", p, t.launches[p]))
	}
	launches := fmt.Sprintf("%d elastic launches", total)
	if len(pools) > 0 {
		launches += " (" + strings.Join(pools, ", ") + ")"
	}
	launches += fmt.Sprintf(", %d released", t.releases)
	waits := "no core job ran"
	if n := len(t.coreWaits); n > 0 {
		w := append([]float64(nil), t.coreWaits...)
		sort.Float64s(w)
		waits = fmt.Sprintf("core waited median %.1fs, max %.1fs (%d starts)", w[n/2], w[n-1], n)
	}
	if cost == "" {
		cost = "cost unknown"
	}
	return fmt.Sprintf("summary: %s, %d lent to fixed, %d reclaimed for core, %s, %s", launches, t.lent, t.reclaims, waits, cost)
}
