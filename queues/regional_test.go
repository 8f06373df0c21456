package queues_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

func TestRegionalQueueNames(t *testing.T) {
	q := queues.RegionalQueue(queues.QueueBurst, "eu-1")
	if q != "burst@eu-1" || q.Base() != queues.QueueBurst || q.Region() != "eu-1" {
		t.Fatalf("RegionalQueue(burst, eu-1) = %q (base %q, region %q)", q, q.Base(), q.Region())
	}
	if got := queues.RegionalQueue(queues.QueueOnDemand, ""); got != queues.QueueOnDemand {
		t.Fatalf("an empty region must leave the base queue, got %q", got)
	}
	if queues.QueueLoan.Base() != queues.QueueLoan || queues.QueueLoan.Region() != "" {
		t.Fatal("a base queue must be its own base, with no region")
	}
	for _, c := range []struct {
		q    queues.Queue
		want bool
	}{
		{"core", true}, {"loan", true}, {"burst", true}, {"ondemand", true},
		{"overflow", true}, {"burst@eu-1", true}, {"ondemand@us-east-2", true}, {"overflow@eu-1", true},
		{queues.Queue("burst@" + strings.Repeat("a", queues.MaxRegionLen)), true},
		// Fixed workers never read a regional queue.
		{"core@eu-1", false}, {"loan@eu-1", false},
		// Bad region names.
		{"burst@", false}, {"overflow@EU-1", false}, {"burst@EU-1", false}, {"burst@eu_1", false}, {"burst@eu.1", false},
		{"burst@a@b", false}, {queues.Queue("burst@" + strings.Repeat("a", queues.MaxRegionLen+1)), false},
		{"", false}, {"nowhere", false}, {"nowhere@eu-1", false},
	} {
		if got := c.q.Valid(); got != c.want {
			t.Errorf("%q.Valid() = %v, want %v", c.q, got, c.want)
		}
	}
}

func TestLogicalQueueRoundTripsRegionalNames(t *testing.T) {
	for _, ns := range []queues.Namespace{queues.NewNamespace(""), queues.NewNamespace("bt01")} {
		for _, q := range []queues.Queue{queues.QueueCore, queues.QueueBurst, "burst@eu-1", "ondemand@eu-1", "overflow@eu-1"} {
			name := ns.AsynqQueue(q)
			got, ok := ns.LogicalQueue(name)
			if !ok || got != q {
				t.Errorf("namespace %s: %q → %q → %q, %v", ns.Name(), q, name, got, ok)
			}
		}
		// Queues no worker consumes do not map back.
		for _, q := range []queues.Queue{"core@eu-1", "burst@EU"} {
			if got, ok := ns.LogicalQueue(ns.AsynqQueue(q)); ok {
				t.Errorf("namespace %s: %q mapped back to %q", ns.Name(), q, got)
			}
		}
	}
	// Another namespace's queue is not ours.
	if got, ok := queues.NewNamespace("bt01").LogicalQueue("bt02.burst@eu-1"); ok {
		t.Errorf("bt02's queue mapped into bt01 as %q", got)
	}
	if got, ok := queues.NewNamespace("").LogicalQueue("bt02.burst"); ok {
		t.Errorf("bt02's queue mapped into the default namespace as %q", got)
	}
}

func TestElasticQueuesServePinnedWorkFirst(t *testing.T) {
	for _, c := range []struct {
		onDemand bool
		region   string
		want     []queues.Queue
	}{
		{true, "b", []queues.Queue{"overflow@b", "overflow", "ondemand@b", "ondemand", "burst@b", "burst"}},
		{false, "b", []queues.Queue{"burst@b", "burst"}},
		{true, "", []queues.Queue{"overflow", "ondemand", "burst"}},
		{false, "Not_A_Region", []queues.Queue{"burst"}},
		{true, "Not_A_Region", []queues.Queue{"overflow", "ondemand", "burst"}},
	} {
		if got := queues.ElasticQueues(c.onDemand, c.region); !slices.Equal(got, c.want) {
			t.Errorf("ElasticQueues(%v, %q) = %v, want %v", c.onDemand, c.region, got, c.want)
		}
	}
}

func TestMoveToARegionalQueue(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	sub, err := s.Submit(ctx, spec(""), queues.QueueBurst)
	if err != nil {
		t.Fatal(err)
	}
	to := queues.RegionalQueue(queues.QueueBurst, "eu-1")
	n, err := s.Move(ctx, sub.Job.ID, 1, to, "pinned to region eu-1")
	if n != 2 || err != nil {
		t.Fatalf("Move to %s = %d, %v; want 2, nil", to, n, err)
	}
	got, _ := s.Get(ctx, sub.Job.ID)
	if got.Queue != string(to) || got.Attempt != 2 || got.State != jobs.StateQueued {
		t.Fatalf("after the move: %+v", got)
	}
	if p := pending(t, s, to); p != 1 {
		t.Fatalf("%s holds %d tasks, want exactly 1", to, p)
	}
	if p := pending(t, s, queues.QueueBurst); p != 0 {
		t.Fatalf("burst still holds %d tasks after the move", p)
	}
	// The regional queue is listed once, after the base queues.
	st, err := s.QueueStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []queues.Queue
	for _, x := range st {
		names = append(names, x.Queue)
	}
	if want := append(slices.Clone(queues.Queues), to); !slices.Equal(names, want) {
		t.Fatalf("QueueStats lists %v, want %v", names, want)
	}
	if _, err := s.Move(ctx, sub.Job.ID, 2, "core@eu-1", "no such queue"); err == nil {
		t.Fatal("Move to core@eu-1 succeeded")
	}
}

// TestOverflowIsNotElastic: overflowed core work is read by on-demand
// workers but is not burst work, so nothing that sends elastic work back to
// burst (or to spot) may treat it as such.
func TestOverflowIsNotElastic(t *testing.T) {
	for _, q := range []queues.Queue{queues.QueueOverflow, "overflow@eu-1"} {
		if q.Elastic() || !q.Overflow() {
			t.Errorf("%q: Elastic %v, Overflow %v; want false, true", q, q.Elastic(), q.Overflow())
		}
	}
	for _, q := range []queues.Queue{queues.QueueCore, queues.QueueBurst, "ondemand@eu-1"} {
		if q.Overflow() {
			t.Errorf("%q.Overflow() = true", q)
		}
	}
}

func TestOverflowedJobs(t *testing.T) {
	core := jobs.Spec{Class: jobs.ClassCore}
	for _, c := range []struct {
		j    jobs.Job
		want bool
	}{
		{jobs.Job{Spec: core, State: jobs.StateQueued, Queue: "overflow"}, true},
		{jobs.Job{Spec: core, State: jobs.StateRunning, Queue: "overflow@eu-1"}, true},
		{jobs.Job{Spec: core, State: jobs.StateSucceeded, Queue: "overflow"}, false},
		{jobs.Job{Spec: core, State: jobs.StateRunning, Queue: "core"}, false},
		{jobs.Job{Spec: jobs.Spec{Class: jobs.ClassBurst}, State: jobs.StateRunning, Queue: "ondemand"}, false},
	} {
		if got := queues.Overflowed(c.j); got != c.want {
			t.Errorf("Overflowed(%s %s in %s) = %v, want %v", c.j.Spec.Class, c.j.State, c.j.Queue, got, c.want)
		}
	}
}

func TestMoveACoreJobToOverflow(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	sub, err := s.Submit(ctx, spec(""), queues.QueueCore) // spec is core

	if err != nil {
		t.Fatal(err)
	}
	to := queues.RegionalQueue(queues.QueueOverflow, "eu-1")
	if n, err := s.Move(ctx, sub.Job.ID, 1, to, "overflow"); n != 2 || err != nil {
		t.Fatalf("Move to %s = %d, %v; want 2, nil", to, n, err)
	}
	if p := pending(t, s, to); p != 1 {
		t.Fatalf("%s holds %d tasks, want 1", to, p)
	}
	if p := pending(t, s, queues.QueueCore); p != 0 {
		t.Fatalf("core still holds %d tasks after the move", p)
	}
	// Fenced: a move planned for the old attempt changes nothing.
	if n, err := s.Move(ctx, sub.Job.ID, 1, queues.QueueOverflow, "stale"); n != 0 || err != nil {
		t.Fatalf("stale Move = %d, %v; want 0, nil", n, err)
	}
}

func TestSubmitRefusesAQueueNoWorkerReads(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	_, err := s.Submit(context.Background(), spec(""), "burst@Bad_Region")
	var verr *jobs.ValidationError
	if !errors.As(err, &verr) || !strings.Contains(err.Error(), "Bad_Region") {
		t.Fatalf("Submit to burst@Bad_Region: %v, want a validation error naming the region", err)
	}
}
