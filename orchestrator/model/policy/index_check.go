package policy

import (
	"cmp"
	"fmt"
	"maps"
	"reflect"
	"slices"
)

// Snapshot returns the state the index holds as a snapshot: workers and
// jobs by ID, the jobs Decide does not see (on unknown workers) included.
// IndexOf(ix.Snapshot()) is the full rebuild of ix.
func (ix *Index) Snapshot() Snapshot {
	s := Snapshot{Config: ix.cfg, Pools: slices.Clone(ix.poolList), Launches: slices.Clone(ix.launches),
		TeamUsage: ix.teamUsage}
	for _, w := range ix.sorted {
		s.Workers = append(s.Workers, w.Worker)
	}
	for _, r := range ix.jobs {
		s.Jobs = append(s.Jobs, *r.Job)
	}
	slices.SortFunc(s.Jobs, func(a, b Job) int { return cmp.Compare(a.ID, b.ID) })
	return s
}

// Check rebuilds the index from the records it holds and reports the first
// way the structures kept up by changes differ from the rebuilt ones: the
// queue sets and their order, the jobs on each worker, the workers by ID
// and by pool, and every count. It is for tests; a nil error means the
// upkeep is exact.
func (ix *Index) Check() error {
	want := IndexOf(ix.Snapshot())
	if a, b := ix.state(), want.state(); !reflect.DeepEqual(a, b) {
		for k := range a {
			if !reflect.DeepEqual(a[k], b[k]) {
				return fmt.Errorf("policy.Index: %s is %v after the changes, %v rebuilt", k, a[k], b[k])
			}
		}
		for k := range b {
			if _, ok := a[k]; !ok {
				return fmt.Errorf("policy.Index: %s is missing after the changes, %v rebuilt", k, b[k])
			}
		}
	}
	for k, s := range ix.sized {
		if s.n == 0 {
			return fmt.Errorf("policy.Index: sized set %v is empty but kept", k)
		}
	}
	for k, s := range ix.queued {
		n := 0
		for c, ch := range s.chunks {
			if len(ch) == 0 || len(ch) > chunkMax {
				return fmt.Errorf("policy.Index: queue %v chunk %d holds %d jobs", k, c, len(ch))
			}
			n += len(ch)
		}
		if n != s.n {
			return fmt.Errorf("policy.Index: queue %v counts %d jobs, holds %d", k, s.n, n)
		}
	}
	return nil
}

// state lists what the index derives from its records, by name, in forms
// that compare equal when the derivations agree.
func (ix *Index) state() map[string]any {
	ids := func(js []*Job) []string {
		out := make([]string, len(js))
		for i, j := range js {
			out[i] = j.ID
		}
		return out
	}
	wids := func(ws []*workerRec) []string {
		out := make([]string, len(ws))
		for i, w := range ws {
			out[i] = w.ID
		}
		return out
	}
	st := map[string]any{
		"jobs to core":       ix.toCore,
		"jobs to loan":       ix.toLoan,
		"jobs to overflow":   maps.Clone(ix.toOverflow),
		"shares to core":     ix.coreShares,
		"shares to loan":     ix.loanShares,
		"shares to overflow": maps.Clone(ix.overflowShares),
		"known homes":        ix.knownHomes,
		"team slots bound":   maps.Clone(ix.teamBound),
		"workers by ID":      wids(ix.sorted),
	}
	for k, s := range ix.queued {
		st[fmt.Sprintf("queue %s/%s", k.queue, k.class)] = ids(slices.Collect(s.all()))
	}
	var redirected []string
	for r := range ix.redirected {
		redirected = append(redirected, r.ID)
	}
	slices.Sort(redirected)
	st["jobs with a move in flight"] = redirected
	for pool, ws := range ix.byPool {
		st["workers of pool "+pool] = wids(ws)
	}
	for _, w := range ix.sorted {
		js := ids(w.jobs)
		slices.Sort(js)
		st["jobs on worker "+w.ID] = js
		for i, r := range w.recs {
			if r.Job != w.jobs[i] || r.wpos != i || r.w != w {
				st["records of worker "+w.ID] = "out of step with its jobs"
			}
		}
		if w.use != ix.use[w.ID] {
			st["slot use of worker "+w.ID] = "out of step with the index's"
		}
	}
	for id, u := range ix.use {
		st["slots held on worker "+id] = *u
	}
	for k, s := range ix.sized {
		st[fmt.Sprintf("sized jobs in %s/%s", k.queue, k.class)] = ids(slices.Collect(s.all()))
	}
	for team, s := range ix.held {
		st[fmt.Sprintf("held jobs of team %q", team)] = ids(slices.Collect(s.all()))
	}
	var placed []string
	for r := range ix.placed {
		placed = append(placed, r.ID)
	}
	slices.Sort(placed)
	st["placed jobs waiting"] = placed
	for id, os := range ix.orphans {
		var js []string
		for r := range os {
			js = append(js, r.ID)
		}
		slices.Sort(js)
		st["jobs on unknown worker "+id] = js
	}
	return st
}
