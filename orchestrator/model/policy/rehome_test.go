package policy

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func TestRehome(t *testing.T) {
	burst := jobs.ClassBurst
	// A full fixed pool, so nothing is lent, and one idle spot and one
	// idle on-demand worker in eu, so nothing is launched.
	fxp, fxw := fixedWith(4, 4)
	pools := append(fxp, elasticPool("sp", PoolSpot, "eu", 0.3), elasticPool("od", PoolOnDemand, "eu", 1.0))
	s1, o1 := worker("s1", "sp", 4, 0), worker("o1", "od", 4, 0)
	s1.IdleSince, o1.IdleSince = t0, t0 // idle since just now: not released
	workers := append(fxw, s1, o1)
	at := func(id string, home ElasticHome, region string, spotHits int) Job {
		j := queued(id, burst, QueueBurst, ago(time.Minute))
		j.Home, j.Region, j.SpotPreemptions = home, region, spotHits
		return j
	}
	burstQ, onDemandQ := ElasticHome{Known: true}, ElasticHome{Known: true, OnDemand: true}
	burstEU, onDemandEU := ElasticHome{Known: true, Region: "eu"}, ElasticHome{Known: true, OnDemand: true, Region: "eu"}
	notCkpt := at("n1", burstQ, "", 0)
	notCkpt.Checkpointable = false
	inFlight := at("f1", burstQ, "", 3)
	inFlight.PendingAction = Rehome
	loan := queued("l1", burst, QueueLoan, ago(time.Minute))
	loan.SpotPreemptions = 3

	runCases(t, []planCase{
		{"a job at home stays", snap(pools, workers, at("a", burstQ, "", 0), at("b", onDemandEU, "eu", 3)), t0, ""},
		{"spot budget spent: off to ondemand", snap(pools, workers, at("a", burstQ, "", 3)), t0, "rehome(a,ondemand)"},
		{"not checkpointable: off to ondemand", snap(pools, workers, notCkpt), t0, "rehome(n1,ondemand)"},
		{"pinned in plain burst: to its region", snap(pools, workers, at("a", burstQ, "eu", 0)), t0, "rehome(a,burst@eu)"},
		{"both at once", snap(pools, workers, at("a", burstQ, "eu", 5)), t0, "rehome(a,ondemand@eu)"},
		{"pinned in plain ondemand keeps ondemand", snap(pools, workers, at("a", onDemandQ, "eu", 0)), t0, "rehome(a,ondemand@eu)"},
		{"ondemand never goes back to spot", snap(pools, workers, at("a", onDemandQ, "", 0), at("b", onDemandEU, "eu", 0)), t0, ""},
		{"a job pinned elsewhere leaves its region's queue", snap(pools, workers, at("a", burstEU, "", 0)), t0, "rehome(a,burst)"},
		{"unknown home: left alone (the simulator's one queue)", snap(pools, workers, at("a", ElasticHome{}, "eu", 9)), t0, ""},
		{"a rehome in flight is not planned again", snap(pools, workers, inFlight), t0, ""},
		{"only elastic queues have homes", snap(pools, workers, loan), t0, ""},
		{"in queue order", snap(pools, workers, at("b", burstQ, "", 3), at("a", burstQ, "eu", 0)), t0, "rehome(a,burst@eu) rehome(b,ondemand)"},
	})
}

// TestRehomeLeavesLentJobsLent: a job lent this tick is not also re-homed;
// the fixed worker that takes it from loan does not read the elastic queue.
func TestRehomeLeavesLentJobsLent(t *testing.T) {
	fxp, fxw := fixedWith(10, 0)
	j := queued("a", jobs.ClassBurst, QueueBurst, ago(time.Minute))
	j.Home, j.SpotPreemptions = ElasticHome{Known: true}, 3
	runCases(t, []planCase{{"lend wins", snap(fxp, fxw, j), t0, "lend(a)"}})
}

// TestRehomeApplied: with the rehome in flight the next plan is empty,
// and the action carries its target for the controller.
func TestRehomeApplied(t *testing.T) {
	fxp, fxw := fixedWith(4, 4)
	j := queued("a", jobs.ClassBurst, QueueBurst, ago(time.Minute))
	j.Home, j.Region, j.SpotPreemptions = ElasticHome{Known: true}, "eu", 3
	s := snap(fxp, fxw, j)
	p := Decide(s, t0)
	if len(p.Actions) == 0 || p.Actions[0].Kind != Rehome || p.Actions[0].Queue != QueueBurst ||
		p.Actions[0].Home != (ElasticHome{Known: true, OnDemand: true, Region: "eu"}) {
		t.Fatalf("plan %s", p)
	}
	applied := Apply(s, p, t0)
	mustValid(t, applied)
	if next := Decide(applied, t0); next.Count(Rehome) != 0 {
		t.Fatalf("planned again: %s", next)
	}
}
