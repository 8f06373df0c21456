package policy

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// placedOn is a queued core job of k slots placed on ws a minute ago.
func placedOn(id string, k int, ws ...string) Job {
	j := sized(queued(id, jobs.ClassCore, QueueCore, ago(time.Hour)), k, len(ws))
	if len(ws) == 1 {
		j.Replicas = 0
	}
	j.Placed = ws
	j.PlacedAt = ago(time.Minute)
	return j
}

// A placement on a worker that is gone, draining or reads no place queue
// of its own is taken back by rule 8 (Unplace, naming the worker and
// why); one on workers that all take placed work stays where it is.
func TestUnplaceTakesBackStrayPlacements(t *testing.T) {
	pools := []Pool{fixedPool("fx", "eu")}
	up := worker("up", "fx", 4, 4)
	drn := worker("drn", "fx", 4, 4)
	drn.State = WorkerDraining
	old := worker("old", "fx", 4, 4)
	old.NoPlacedWork = true
	cases := []struct {
		name string
		job  Job
		want string // "" for no take-back, else the Reason's tail
	}{
		{"on an up worker it stays", placedOn("j", 4, "up"), ""},
		{"on a gone worker", placedOn("j", 4, "gone"), "gone gone"},
		{"on a draining worker", placedOn("j", 4, "drn"), "drn draining"},
		{"on a worker reading no place queue", placedOn("j", 4, "old"), "old reads no place queue of its own"},
		{"a gang with one member on a gone worker", placedOn("j", 2, "up", "gone"), "gone gone"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := snap(pools, []Worker{up, drn, old}, c.job)
			mustValid(t, s)
			p := Decide(s, t0)
			var got []Action
			for _, a := range p.Actions {
				if a.Kind == Unplace {
					got = append(got, a)
				}
			}
			if c.want == "" {
				if len(got) != 0 {
					t.Fatalf("took back a placement that may start: %s", p)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("want one Unplace, got plan\n%s", p)
			}
			a := got[0]
			if a.Job != "j" || a.Rule != 8 || a.Queue != QueueCore || !slices.Equal(a.Workers, c.job.Placed) ||
				!strings.Contains(a.Reason, c.want) {
				t.Errorf("Unplace %+v, want job j, rule 8, queue core, workers %v, reason naming %q", a, c.job.Placed, c.want)
			}
			// Placed again next tick, not this one: the move ends the
			// attempt a Place now would be fenced on.
			if n := p.Count(Place); n != 0 {
				t.Errorf("placed %d jobs in the tick that took the placement back:\n%s", n, p)
			}
		})
	}
}

// With the take-back in flight (Apply records Unplace pending) the next
// plan holds nothing for the job; once it lands (the job unplaced),
// rule 8 places it again on a worker that takes placed work.
func TestUnplaceIdempotentThenPlacedAgain(t *testing.T) {
	pools := []Pool{fixedPool("fx", "eu")}
	drn := worker("drn", "fx", 4, 4)
	drn.State = WorkerDraining
	free := worker("free", "fx", 4, 0)
	old := worker("old", "fx", 8, 0)
	old.NoPlacedWork = true
	s := snap(pools, []Worker{drn, free, old}, placedOn("j", 4, "drn"))
	mustValid(t, s)
	p := Decide(s, t0)
	if got := summary(p); !strings.Contains(got, "unplace(j") {
		t.Fatalf("plan %s holds no take-back", got)
	}
	applied := Apply(s, p, t0)
	if err := applied.Validate(); err != nil {
		t.Fatalf("Apply made an invalid snapshot: %v", err)
	}
	if j := applied.Jobs[0]; j.PendingAction != Unplace || !slices.Equal(j.Placed, []string{"drn"}) {
		t.Fatalf("Apply recorded %+v, want Unplace pending with the placement kept", j)
	}
	if next := Decide(applied, t0); !next.Empty() {
		t.Fatalf("not idempotent: with the take-back in flight the next plan is\n%s", next)
	}
	landed := applied
	landed.Jobs = slices.Clone(applied.Jobs)
	landed.Jobs[0].PendingAction, landed.Jobs[0].Placed, landed.Jobs[0].PlacedAt = "", nil, time.Time{}
	next := Decide(landed, t0.Add(time.Second))
	var place *Action
	for i, a := range next.Actions {
		if a.Kind == Place && a.Job == "j" {
			place = &next.Actions[i]
		}
	}
	// Not on old, which would never start it, though it has more room.
	if place == nil || !slices.Equal(place.Workers, []string{"free"}) {
		t.Fatalf("once landed, want j placed on free, got\n%s", next)
	}
}

// Take-backs of several jobs come in queue order whatever the order of
// the snapshot's slices, and are the same plan each time.
func TestUnplaceDeterministic(t *testing.T) {
	pools := []Pool{fixedPool("fx", "eu")}
	drn := worker("drn", "fx", 8, 8)
	drn.State = WorkerDraining
	up := worker("up", "fx", 4, 4)
	a := placedOn("a", 2, "drn")
	a.QueuedAt = ago(3 * time.Hour)
	b := placedOn("b", 2, "gone")
	b.QueuedAt = ago(2 * time.Hour)
	c := placedOn("c", 2, "up", "drn")
	c.QueuedAt = ago(4 * time.Hour)
	s := snap(pools, []Worker{drn, up}, a, b, c)
	mustValid(t, s)
	p := Decide(s, t0)
	var order []string
	for _, x := range p.Actions {
		if x.Kind == Unplace {
			order = append(order, x.Job)
		}
	}
	if want := []string{"c", "a", "b"}; !slices.Equal(order, want) {
		t.Fatalf("take-backs %v, want %v in queue order:\n%s", order, want, p)
	}
	for _, perm := range [][]int{{2, 1, 0}, {1, 0, 2}, {0, 2, 1}} {
		r := s
		r.Jobs = []Job{s.Jobs[perm[0]], s.Jobs[perm[1]], s.Jobs[perm[2]]}
		r.Workers = []Worker{s.Workers[1], s.Workers[0]}
		if got := Decide(r, t0); !reflect.DeepEqual(got, p) {
			t.Fatalf("input order changed the plan:\n%s\n%s", p, got)
		}
	}
}
