package policy

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// world is a small discrete-time model of Ballast around Decide, in the
// manner of Nomad's scheduler test harness: each step plans, records the
// plan, applies it with Apply, lets the in-flight moves land, boots
// launches, finishes jobs and lets workers take queued work. It lives in a
// test file because the real simulator owns durations, arrivals and prices;
// this one only has to be faithful enough to check behaviour across ticks.
type world struct {
	t     tb
	s     Snapshot
	now   time.Time
	tick  time.Duration
	plans []Plan
	// runtime is how long a job runs once started; jobs not named run on.
	runtime map[string]time.Duration
	// dry pools never fill their launches.
	dry     map[string]bool
	started int
}

func newWorld(t tb, s Snapshot, tick time.Duration) *world {
	return &world{t: t, s: fixBusy(s), now: t0, tick: tick, runtime: map[string]time.Duration{}, dry: map[string]bool{}}
}

// tb is what the harness needs from *testing.T and *rapid.T alike.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

// step runs one tick and returns its plan.
func (w *world) step() Plan {
	w.t.Helper()
	mustValid(w.t, w.s)
	p := Decide(w.s, w.now)
	w.plans = append(w.plans, p)
	w.s = Apply(w.s, p, w.now)
	mustValid(w.t, w.s)
	w.land(p)
	w.boot()
	w.finish()
	w.dispatch()
	w.check()
	w.now = w.now.Add(w.tick)
	return p
}

// run steps n times and returns the plan summaries.
func (w *world) run(n int) []string {
	w.t.Helper()
	var out []string
	for range n {
		out = append(out, summary(w.step()))
	}
	return out
}

func (w *world) submit(j Job, runtime time.Duration) {
	j.QueuedAt, j.SubmittedAt = w.now, w.now
	w.s.Jobs = append(w.s.Jobs, j)
	if runtime > 0 {
		w.runtime[j.ID] = runtime
	}
}

func (w *world) worker(id string) *Worker {
	for i := range w.s.Workers {
		if w.s.Workers[i].ID == id {
			return &w.s.Workers[i]
		}
	}
	return nil
}

func (w *world) job(id string) *Job {
	for i := range w.s.Jobs {
		if w.s.Jobs[i].ID == id {
			return &w.s.Jobs[i]
		}
	}
	return nil
}

func (w *world) pool(name string) Pool {
	for _, p := range w.s.Pools {
		if p.Name == name {
			return p
		}
	}
	w.t.Fatalf("no pool %q", name)
	return Pool{}
}

// free takes a job off its worker.
func (w *world) free(j *Job) {
	if wk := w.worker(j.Worker); wk != nil {
		wk.Busy--
		if wk.Busy == 0 {
			wk.IdleSince = w.now
		}
	}
}

// land completes every move in flight, as the controller would once the
// checkpoint is written and the next attempt is queued.
func (w *world) land(p Plan) {
	homes := map[string]ElasticHome{}
	for _, a := range p.Actions {
		if a.Kind == Rehome {
			homes[a.Job] = a.Home
		}
	}
	for i := range w.s.Jobs {
		j := &w.s.Jobs[i]
		switch j.PendingAction {
		case Rehome:
			// A rehome generated in flight has no action behind it: it
			// lands where the job belongs.
			h, ok := homes[j.ID]
			if !ok {
				h = j.home(w.s.Config.MaxSpotPreemptions)
			}
			j.Home = h
		case Lend:
			j.Queue = QueueLoan
		case Admit:
			j.Queue = QueueCore
		case Unlend:
			j.Queue = QueueBurst
		case Overflow:
			j.Queue = QueueOverflow
		case Reclaim, Migrate, Repack:
			w.free(j)
			j.Queue = j.destination()
			j.State, j.Worker, j.Pool, j.StartedAt, j.QueuedAt = jobs.StateQueued, "", "", time.Time{}, w.now
			// A core loan reclaimed under shares waits first in held.
			j.Readmitted = j.Readmitted || j.Queue == QueueHeld
			if j.Checkpointable {
				j.LastCheckpointAt = w.now
			}
		}
		j.PendingAction = ""
		if j.Queue != QueueBurst {
			j.Home = ElasticHome{} // lent: out of the elastic queues
		}
	}
}

// boot turns launches older than their pool's start-up delay into workers.
func (w *world) boot() {
	var left []Launch
	for _, l := range w.s.Launches {
		p := w.pool(l.Pool)
		if w.dry[l.Pool] || w.now.Sub(l.RequestedAt) < p.StartupDelay {
			left = append(left, l)
			continue
		}
		for range l.Count {
			w.started++
			w.s.Workers = append(w.s.Workers, Worker{
				ID: fmt.Sprintf("%s-%d", l.Pool, w.started), Pool: l.Pool, Slots: p.SlotsPerWorker, State: WorkerUp,
				StartedAt: w.now, LaunchRequestedAt: l.RequestedAt, IdleSince: w.now,
			})
		}
	}
	w.s.Launches = left
}

// finish ends jobs whose runtime is up.
func (w *world) finish() {
	w.s.Jobs = slices.DeleteFunc(w.s.Jobs, func(j Job) bool {
		d, ok := w.runtime[j.ID]
		if ok && j.running() && w.now.Sub(j.StartedAt) >= d {
			w.free(&j)
			return true
		}
		return false
	})
}

// dispatch lets every up worker take queued jobs from its queues: fixed
// workers core then loan, elastic workers their overflowed core jobs and
// the burst jobs they may run.
func (w *world) dispatch() {
	order := make([]int, len(w.s.Jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return byQueueOrder(&w.s.Jobs[a], &w.s.Jobs[b]) })
	slices.SortStableFunc(w.s.Workers, func(a, b Worker) int { return cmp.Compare(a.ID, b.ID) })
	for wi := range w.s.Workers {
		wk := &w.s.Workers[wi]
		p := w.pool(wk.Pool)
		if wk.State != WorkerUp {
			continue
		}
		var takes []func(j *Job) bool
		if p.Kind == PoolFixed {
			takes = []func(*Job) bool{
				func(j *Job) bool { return j.Queue == QueueCore },
				func(j *Job) bool { return j.Queue == QueueLoan },
			}
		} else {
			takes = []func(*Job) bool{
				func(j *Job) bool { return j.Queue == QueueOverflow && j.Pool == p.Name },
				func(j *Job) bool {
					return j.Queue == QueueBurst && j.fitsRegion(p.Region) &&
						(p.Kind != PoolSpot || j.spotEligible(w.s.Config.MaxSpotPreemptions))
				},
			}
		}
		for _, take := range takes {
			for _, i := range order {
				j := &w.s.Jobs[i]
				if wk.Busy >= wk.Slots || !j.queued() || j.PendingAction != "" || !take(j) {
					continue
				}
				j.State, j.Worker, j.Pool, j.StartedAt = jobs.StateRunning, wk.ID, wk.Pool, w.now
				j.Home = ElasticHome{} // only queued work has an elastic home
				wk.Busy++
				wk.IdleSince = time.Time{}
			}
		}
	}
}

// check asserts what must hold after every step.
func (w *world) check() {
	w.t.Helper()
	mustValid(w.t, w.s)
	for _, j := range w.s.Jobs {
		if !j.running() {
			continue
		}
		if wk := w.worker(j.Worker); j.Class == jobs.ClassCore && w.pool(wk.Pool).Kind == PoolSpot {
			w.t.Fatalf("%s: core job %s runs on spot worker %s", w.now, j.ID, wk.ID)
		}
	}
}

// moves counts, per job, the actions that moved it over the whole run.
func (w *world) moves() map[string][]ActionKind {
	out := map[string][]ActionKind{}
	for _, p := range w.plans {
		for _, a := range p.Actions {
			if a.moves() {
				out[a.Job] = append(out[a.Job], a.Kind)
			}
		}
	}
	return out
}
