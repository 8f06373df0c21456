package controller_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers"
)

func TestRouterKeepsPinnedWorkInItsRegion(t *testing.T) {
	pin := map[string]string{controller.RegionLabel: "eu-1"}
	spot := jobs.Spec{Class: jobs.ClassBurst, Checkpointable: true, Retryable: true, Labels: pin}
	noCkpt := jobs.Spec{Class: jobs.ClassBurst, Retryable: true, Labels: pin}
	core := jobs.Spec{Class: jobs.ClassCore, Checkpointable: true, Retryable: true, Labels: pin}
	managed := controller.Router{ElasticManaged: true}
	for _, c := range []struct {
		name string
		r    controller.Router
		spec jobs.Spec
		want queues.Queue
	}{
		{"pinned spot-eligible burst", managed, spot, "burst@eu-1"},
		{"pinned burst that cannot checkpoint", managed, noCkpt, "ondemand@eu-1"},
		// Fixed workers are not regional: the policy only lends a pinned
		// job when every fixed worker is in its region.
		{"pinned core", managed, core, queues.QueueCore},
		{"pinned burst without elastic capacity", controller.Router{}, spot, queues.QueueLoan},
	} {
		if got := c.r.Route(c.spec); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	if got := controller.ElasticQueue(spot, 3, 3); got != "ondemand@eu-1" {
		t.Errorf("pinned job with its spot budget spent: %s, want ondemand@eu-1", got)
	}
}

// regionWorker starts an elastic worker of a pool in region, consuming what
// the node command gives such a worker, and stops it when the test ends.
func regionWorker(t *testing.T, store *queues.Store, id, region string, onDemand bool) {
	t.Helper()
	w, err := workers.New(store, workers.Options{ID: id, Pool: "pool-" + region, Slots: 1,
		Queues: queues.ElasticQueues(onDemand, region), PollInterval: 5 * time.Millisecond,
		Heartbeat: 100 * time.Millisecond, DrainTimeout: 300 * time.Millisecond,
		LogDir: t.TempDir(), CheckpointDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("workers.New %s: %v", id, err)
	}
	if err := w.Start(context.Background()); err != nil {
		t.Fatalf("Start %s: %v", id, err)
	}
	t.Cleanup(w.Stop)
}

func TestPinnedJobWaitsForAWorkerOfItsRegion(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	router := controller.Router{ElasticManaged: true}
	submit := func(region string) jobs.Job {
		t.Helper()
		spec := jobs.Spec{Command: []string{"true"}, Class: jobs.ClassBurst, Checkpointable: true, Retryable: true,
			Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}
		if region != "" {
			spec.Labels = map[string]string{controller.RegionLabel: region}
		}
		sub, err := store.Submit(ctx, spec, router.Route(spec))
		if err != nil {
			t.Fatalf("Submit: %v", err)
		}
		return sub.Job
	}
	get := func(id string) jobs.Job {
		t.Helper()
		j, err := store.Get(ctx, id)
		if err != nil {
			t.Fatalf("Get %s: %v", id, err)
		}
		return j
	}
	succeeded := func(id string) func() bool {
		return func() bool { return get(id).State == jobs.StateSucceeded }
	}

	regionWorker(t, store, "spot-a", "a", false) // burst@a, burst
	pinned := submit("b")
	if pinned.Queue != "burst@b" {
		t.Fatalf("the job pinned to b waits in %s, want burst@b", pinned.Queue)
	}
	// An unpinned job shows the region-a worker is up and polling.
	free := submit("")
	testenv.Eventually(t, 5*time.Second, "the region-a worker runs unpinned work", succeeded(free.ID))
	if j := get(free.ID); j.Worker != "spot-a" {
		t.Fatalf("unpinned job ran on %q, want spot-a (the only worker)", j.Worker)
	}
	// Not a wait for an outcome: a window in which the idle region-a
	// worker, polling every 5ms, would have taken the pinned job if
	// dispatch let it.
	time.Sleep(500 * time.Millisecond)
	if j := get(pinned.ID); j.State != jobs.StateQueued || j.Attempt != 1 || j.Worker != "" {
		t.Fatalf("the job pinned to b did not wait for region b: %+v", j)
	}

	regionWorker(t, store, "ondemand-b", "b", true) // ondemand@b, ondemand, burst@b, burst
	testenv.Eventually(t, 5*time.Second, "the region-b worker runs the job pinned to b", succeeded(pinned.ID))
	if j := get(pinned.ID); j.Worker != "ondemand-b" || j.Attempt != 1 {
		t.Fatalf("the job pinned to b ran on %q (attempt %d), want ondemand-b", j.Worker, j.Attempt)
	}

	// Unpinned work goes to whichever region is free.
	for range 4 {
		j := submit("")
		testenv.Eventually(t, 5*time.Second, "unpinned work runs with two regions up", succeeded(j.ID))
		if w := get(j.ID).Worker; w != "spot-a" && w != "ondemand-b" {
			t.Fatalf("unpinned job ran on %q", w)
		}
	}
}

func TestHybridKeepsPinnedJobsInTheirRegionalQueue(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	spec := jobs.Spec{Command: []string{"true"}, Class: jobs.ClassBurst, Checkpointable: true, Retryable: true,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second),
		Labels: map[string]string{controller.RegionLabel: "eu-1"}}
	// Plain burst is where a spot notice sends a job back, and where
	// pinned jobs waited before dispatch honoured pins.
	sub, err := store.Submit(ctx, spec, queues.QueueBurst)
	if err != nil {
		t.Fatal(err)
	}
	h := &controller.Hybrid{Store: store, Config: policy.DefaultConfig(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if _, err := h.Tick(ctx, time.Now()); err != nil {
		t.Fatalf("Tick: %v", err)
	}
	j, _ := store.Get(ctx, sub.Job.ID)
	if j.Queue != "burst@eu-1" || j.Attempt != 2 {
		t.Fatalf("after a tick the pinned job waits in %s (attempt %d), want burst@eu-1", j.Queue, j.Attempt)
	}
	// The policy sees the regional queue as its one elastic backlog, with
	// the pin read from the label.
	s, err := h.Snapshot(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Jobs) != 1 || s.Jobs[0].Queue != policy.QueueBurst || s.Jobs[0].Region != "eu-1" {
		t.Fatalf("snapshot jobs: %+v", s.Jobs)
	}
	// Already home: a second tick moves nothing.
	if _, err := h.Tick(ctx, time.Now()); err != nil {
		t.Fatalf("Tick: %v", err)
	}
	if j, _ := store.Get(ctx, sub.Job.ID); j.Queue != "burst@eu-1" || j.Attempt != 2 {
		t.Fatalf("a second tick moved the job: %s attempt %d", j.Queue, j.Attempt)
	}
}
