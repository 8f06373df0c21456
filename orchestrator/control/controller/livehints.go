package controller

import "sync"

// maxHints bounds the jobs hinted between two ticks: a storm of hints, or
// forged ones, becomes one full rebuild, not unbounded memory.
const maxHints = 100_000

// hintSet collects the jobs named by Changed until the next tick takes
// them. It has its own lock: hints arrive on other goroutines while a tick
// runs.
type hintSet struct {
	mu      sync.Mutex
	ids     map[string]bool
	flooded bool
}

func (hs *hintSet) add(ids ...string) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.ids == nil {
		hs.ids = map[string]bool{}
	}
	for _, id := range ids {
		if len(hs.ids) >= maxHints {
			hs.flooded = true
			return
		}
		hs.ids[id] = true
	}
}

func (hs *hintSet) take() (map[string]bool, bool) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	ids, flooded := hs.ids, hs.flooded
	hs.ids, hs.flooded = nil, false
	return ids, flooded
}

// Changed tells the leader that the records of these jobs may have
// changed: its next tick reads them again. A hint is only that: the
// record decides, and a hint naming a job the active index does not hold
// is dropped, so a forged one costs at most a read.
func (h *Hybrid) Changed(jobIDs ...string) { h.hints.add(jobIDs...) }
