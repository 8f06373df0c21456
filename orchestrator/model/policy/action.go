package policy

import (
	"fmt"
	"strings"
)

// ActionKind names what an action does.
type ActionKind string

// The actions a plan may hold.
const (
	// Lend moves a queued burst job from burst to loan (rules 2 and 4).
	Lend ActionKind = "lend"
	// Unlend moves a queued burst job from loan back to burst (rule 2).
	Unlend ActionKind = "unlend"
	// Reclaim checkpoints a burst job borrowing a fixed slot and sends it
	// back to burst, so a core job can have the slot (rule 1). Under team
	// shares (rule 9) it stops another team's loan, burst or core, for
	// an owner: a core loan goes back to held (Queue says where).
	Reclaim ActionKind = "reclaim"
	// Migrate checkpoints a job running on elastic capacity and requeues it
	// for fixed quota: loan for burst jobs, core for core jobs (rule 4).
	Migrate ActionKind = "migrate"
	// Repack checkpoints a burst job on an elastic worker that rule 5
	// empties and requeues it to burst, where the free slots of the pool's
	// other busy workers take it; the worker is drained in the same plan
	// and released once empty (rule 5).
	Repack ActionKind = "repack"
	// ScaleUp asks a pool's provider for Count more workers (rule 3).
	ScaleUp ActionKind = "scale_up"
	// Drain tells an elastic worker to take no more work (rule 4).
	Drain ActionKind = "drain"
	// Release hands an empty elastic worker back to its provider (rule 5).
	Release ActionKind = "release"
	// Overflow sends a queued core job to an on-demand pool (rule 7).
	Overflow ActionKind = "overflow"
	// Place starts a queued sized job (rule 8): member i runs on
	// Workers[i]. The controller writes one delivery per member into that
	// worker's own queue; a worker without the free slots yet holds them
	// for the job as they free (a reservation) and takes no new one-slot
	// work meanwhile.
	Place ActionKind = "place"
	// Admit moves a held core job to core (rule 9): within its team's
	// share, or as a loan of reclaimable work.
	Admit ActionKind = "admit"
	// Unplace takes back the placement of a queued sized job whose
	// workers (Workers, as placed) do not all take placed work any more:
	// one is gone, draining, or reads no place queue of its own (rule 8).
	// The job waits in Queue, its own, to be placed again as a new
	// attempt; the delivery held on the old workers is stale.
	Unplace ActionKind = "unplace"
)

// Action is one step of a plan. Which fields are set depends on Kind:
// Job for the moves (Lend, Unlend, Reclaim, Migrate, Repack, Overflow,
// Rehome, Admit, Unplace),
// Worker for Reclaim, Migrate, Repack, Drain and Release, Pool for ScaleUp
// and Overflow (the target) and for Migrate and Repack (the pool left),
// Queue for every move (the target queue; for Place the job's own,
// logical, queue), Count for ScaleUp, Home for Rehome, Workers for Place
// (and for Unplace the workers it was placed on).
type Action struct {
	Kind   ActionKind
	Job    string
	Worker string
	Pool   string
	Queue  Queue
	Count  int
	// Home is the elastic queue a Rehome sends the job to.
	Home ElasticHome
	// Workers are, for Place, the worker of each member of the job; for
	// Unplace, those it was placed on.
	Workers []string
	// Team is the team of the job moved; Owner, for a reclaim or an
	// admission under shares, the team whose share it is about (rule 9).
	Team, Owner string
	// Rebalance marks a rule 9 reclaim made by the optional rebalancing
	// between borrowers, not for an owner: whoever carries it out counts
	// it in the job's Rebalanced.
	Rebalance bool
	// Rule is the design rule (1-9) that produced the action.
	Rule int
	// Reason says why, with the numbers, for logs and "ballast plan".
	Reason string
}

// String renders the action on one line.
func (a Action) String() string {
	var b strings.Builder
	b.WriteString(string(a.Kind))
	if a.Job != "" {
		fmt.Fprintf(&b, " job=%s", a.Job)
	}
	if a.Worker != "" {
		fmt.Fprintf(&b, " worker=%s", a.Worker)
	}
	if a.Pool != "" {
		fmt.Fprintf(&b, " pool=%s", a.Pool)
	}
	if a.Count != 0 {
		fmt.Fprintf(&b, " n=%d", a.Count)
	}
	if len(a.Workers) > 0 {
		fmt.Fprintf(&b, " workers=%s", strings.Join(a.Workers, ","))
	}
	if a.Kind == Rehome {
		fmt.Fprintf(&b, " -> %s", a.Home)
	} else if a.Queue != "" {
		fmt.Fprintf(&b, " -> %s", a.Queue)
	}
	fmt.Fprintf(&b, " (rule %d: %s)", a.Rule, a.Reason)
	return b.String()
}

// moves reports whether the action moves a job.
func (a Action) moves() bool { return a.Job != "" }
