package policy

import (
	"fmt"
	"slices"
	"strings"

	"pgregory.net/rapid"
)

// genSizedSnapshot draws a snapshot as genSnapshot does and then gives it
// sizes: workers with GPU labels, CPUs and memory, some running jobs of
// two slots, queued jobs of 1 to 8 slots, gangs, label and CPU demands;
// and, half the time, the state once one plan of it is in flight, so that
// placed jobs wait on their workers.
func genSizedSnapshot(t *rapid.T) Snapshot {
	s := genSnapshot(t)
	used := map[string]int{}
	for _, j := range s.Jobs {
		if j.running() {
			used[j.Worker]++
		}
	}
	for i := range s.Workers {
		w := &s.Workers[i]
		if g := rapid.SampledFrom([]string{"", "A", "B"}).Draw(t, "gpu"); g != "" {
			w.Labels = map[string]string{"gpu": g}
		}
		w.CPUs = rapid.SampledFrom([]float64{0, 4, 16}).Draw(t, "worker_cpus")
	}
	worker := map[string]*Worker{}
	for i := range s.Workers {
		worker[s.Workers[i].ID] = &s.Workers[i]
	}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if j.running() {
			w := worker[j.Worker]
			if w != nil && used[w.ID]+1 <= w.Slots && rapid.IntRange(0, 3).Draw(t, "wide_running") == 0 {
				j.Slots, j.Share = 2, 0
				used[w.ID]++
				w.Busy = max(w.Busy, used[w.ID])
			}
			continue
		}
		if !rapid.Bool().Draw(t, "sized") {
			continue
		}
		j.Slots = rapid.SampledFrom([]int{0, 1, 2, 2, 3, 4, 8}).Draw(t, "slots")
		j.Replicas = rapid.SampledFrom([]int{0, 1, 1, 2, 3}).Draw(t, "replicas")
		if j.Slots > 1 || j.Replicas > 1 {
			j.Share = 0 // a share is of one GPU, for one member
		}
		if rapid.IntRange(0, 3).Draw(t, "requires") == 0 {
			j.Requires = map[string]string{"gpu": rapid.SampledFrom([]string{"A", "B"}).Draw(t, "gpu_req")}
		}
		j.CPUs = rapid.SampledFrom([]float64{0, 0, 2, 8}).Draw(t, "cpus")
	}
	if err := s.Validate(); err != nil {
		t.Fatalf("the generator made an invalid snapshot: %v", err)
	}
	if rapid.Bool().Draw(t, "in_flight_plan") {
		s = Apply(s, Decide(s, t0), t0)
		if err := s.Validate(); err != nil {
			t.Fatalf("Apply made an invalid snapshot: %v", err)
		}
		strandPlacements(t, &s)
	}
	return s
}

// strandPlacements, some of the time, has a worker that holds placed
// jobs stop taking placed work as they wait: it drains, or restarts
// reading no place queue of its own, or (with nothing running there) is
// gone. Rule 8 takes those placements back.
func strandPlacements(t *rapid.T, s *Snapshot) {
	var holding []string
	for _, j := range s.Jobs {
		if j.waitsPlaced() {
			holding = append(holding, j.Placed...)
		}
	}
	if len(holding) == 0 || !rapid.Bool().Draw(t, "strand") {
		return
	}
	id := rapid.SampledFrom(holding).Draw(t, "stranded_worker")
	runs := slices.ContainsFunc(s.Jobs, func(j Job) bool { return j.running() && slices.Contains(append([]string{j.Worker}, j.Placed...), id) })
	s.Workers = slices.Clone(s.Workers)
	i := slices.IndexFunc(s.Workers, func(w Worker) bool { return w.ID == id })
	switch how := rapid.IntRange(0, 2).Draw(t, "strand_how"); {
	case how == 0 && !runs:
		s.Workers = slices.Delete(s.Workers, i, i+1)
	case how == 1:
		s.Workers[i].State = WorkerDraining
	default:
		s.Workers[i].NoPlacedWork = true
	}
	if err := s.Validate(); err != nil {
		t.Fatalf("stranding %s made an invalid snapshot: %v", id, err)
	}
}

// placeSummary is summary with each Place's workers: place(job,w1+w2).
func placeSummary(p Plan) string {
	var parts []string
	for _, a := range p.Actions {
		if a.Kind != Place {
			parts = append(parts, summary(Plan{Actions: []Action{a}}))
			continue
		}
		parts = append(parts, fmt.Sprintf("place(%s,%s)", a.Job, strings.Join(a.Workers, "+")))
	}
	return strings.Join(parts, " ")
}

// checkPlacement asserts what must hold of rule 8's actions in a plan for
// s: a Place names a queued, sized, unplaced job and one up worker per
// member, each big enough, carrying the labels, of the kind the job's
// queue runs on, all in one region; no worker is given more slots than it
// has free, except by the one reservation a worker group may make, and
// not even that in a group whose reservation already waits.
func checkPlacement(t *rapid.T, s Snapshot, p Plan) {
	t.Helper()
	job := map[string]Job{}
	for _, j := range s.Jobs {
		job[j.ID] = j
	}
	worker := map[string]Worker{}
	for _, w := range s.Workers {
		worker[w.ID] = w
	}
	pool := map[string]Pool{}
	for _, pl := range s.Pools {
		pool[pl.Name] = pl
	}
	// What the records hold on each worker before the plan.
	held := heldSlots(s)
	waiting := map[string]bool{} // groups with a placed job waiting
	type group struct {
		queue          Queue
		region, target string
	}
	groupOf := func(j Job) group {
		g := group{queue: j.Queue, region: j.Region, target: "fixed"}
		switch j.Queue {
		case QueueOverflow:
			g.target = "pool " + j.Pool
		case QueueBurst:
			g.target = "elastic"
			if j.Home.OnDemand || !j.spotEligible(s.Config.MaxSpotPreemptions) {
				g.target = "ondemand"
			}
		}
		return g
	}
	// A placement the plan takes back (Unplace) no longer waits: its
	// group may reserve again in the same plan.
	unplaced := map[string]bool{}
	for _, a := range p.Actions {
		if a.Kind == Unplace {
			unplaced[a.Job] = true
		}
	}
	for _, j := range s.Jobs {
		if j.queued() && len(j.Placed) > 0 && !unplaced[j.ID] {
			waiting[fmt.Sprint(groupOf(j))] = true
		}
	}
	free := map[string]int{}
	for _, w := range s.Workers {
		free[w.ID] = w.Slots - min(max(w.Busy, held[w.ID])+placedSlots(s, unplaced)[w.ID], w.Slots)
	}
	reservations := map[string]int{}
	for _, a := range p.Actions {
		if a.Kind != Place {
			continue
		}
		fail := func(why string) { t.Fatalf("%s: %s\n%s", a, why, p) }
		j, ok := job[a.Job]
		switch {
		case !ok || !j.queued() || !j.sized() || len(j.Placed) > 0 || j.PendingAction != "":
			fail("place of a job that is not queued, sized and unplaced")
		case len(a.Workers) != max(j.Replicas, 1):
			fail(fmt.Sprintf("%d workers for %d members: a gang goes all at once", len(a.Workers), max(j.Replicas, 1)))
		case a.Rule != 8 || a.Queue != j.Queue || a.Reason == "":
			fail("not rule 8, or not the job's own queue, or no reason")
		}
		over := false
		region := ""
		for i, id := range a.Workers {
			w, ok := worker[id]
			pl := pool[w.Pool]
			kind := pl.Kind
			switch {
			case !ok || w.State != WorkerUp || w.NoPlacedWork:
				fail("a member on an unknown or not-up worker, or one that takes no placed work")
			case w.Slots < max(j.Slots, 1):
				fail("a member on a worker too small for it")
			case !w.carries(j.Requires, &pl):
				fail("a member on a worker without the labels it requires")
			case !j.fitsRegion(pool[w.Pool].Region):
				fail("a member outside the job's region")
			case (j.Queue == QueueCore || j.Queue == QueueLoan) && kind != PoolFixed,
				j.Queue == QueueOverflow && w.Pool != j.Pool,
				j.Queue == QueueBurst && !kind.Elastic(),
				kind == PoolSpot && !j.spotEligible(s.Config.MaxSpotPreemptions):
				fail("a member on a worker of the wrong kind")
			}
			if i == 0 {
				region = pool[w.Pool].Region
			} else if pool[w.Pool].Region != region {
				fail("a gang across regions")
			}
			if free[id] -= max(j.Slots, 1); free[id] < 0 {
				over = true
			}
		}
		if over {
			g := fmt.Sprint(groupOf(j))
			if reservations[g]++; reservations[g] > 1 || waiting[g] {
				fail(fmt.Sprintf("a second reservation in group %s over-commits a worker", g))
			}
		}
	}
	// A worker over-committed by a reservation takes nothing after it.
	for id, n := range free {
		if n < 0 && !overByOne(p, free, id, job) {
			t.Fatalf("worker %s is over-committed by more than its last placement\n%s", id, p)
		}
	}
}

// overByOne reports whether the over-commitment of worker id comes from
// the last placement on it only: every placement before it fitted.
func overByOne(p Plan, free map[string]int, id string, job map[string]Job) bool {
	last := -1
	for i, a := range p.Actions {
		if a.Kind == Place && slices.Contains(a.Workers, id) {
			last = i
		}
	}
	n := 0
	for _, w := range p.Actions[last].Workers {
		if w == id {
			n += max(job[p.Actions[last].Job].Slots, 1)
		}
	}
	return free[id]+n >= 0
}

// heldSlots is what the running jobs of s hold on each worker.
func heldSlots(s Snapshot) map[string]int {
	held := map[string]int{}
	for _, j := range s.Jobs {
		switch {
		case j.running() && len(j.Placed) == 0:
			held[j.Worker] += max(j.Slots, 1)
		case j.running():
			for _, w := range j.Placed {
				held[w] += max(j.Slots, 1)
			}
		}
	}
	return held
}

// placedSlots is what the placed jobs of s still queued hold on each
// worker: on top of what it reports, since it may not know of them yet.
// A placement the plan takes back (takenBack: Unplace) holds nothing, as
// the policy counts it; counting it would make a placement that fits on
// the freed slots look like a second reservation.
func placedSlots(s Snapshot, takenBack map[string]bool) map[string]int {
	held := map[string]int{}
	for _, j := range s.Jobs {
		if j.queued() && !takenBack[j.ID] {
			for _, w := range j.Placed {
				held[w] += max(j.Slots, 1)
			}
		}
	}
	return held
}
