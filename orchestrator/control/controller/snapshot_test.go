package controller_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/provider"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/usage"
)

// keyContent is what key holds, and whether it expires. Content, not
// DUMP: a read may finish rehashing a hash or a set, which reorders its
// serialized form without writing anything.
func keyContent(t *testing.T, rdb *redis.Client, key string) string {
	t.Helper()
	ctx := context.Background()
	typ, err := rdb.Type(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	var v any
	switch typ {
	case "hash":
		h, err := rdb.HGetAll(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		v = h // fmt prints a map's keys sorted
	case "set":
		m, err := rdb.SMembers(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(m)
		v = m
	default:
		d, err := rdb.Dump(ctx, key).Result()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		v = d
	}
	ttl, err := rdb.PTTL(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s %v ttl=%v", typ, v, ttl > 0)
}

// namespaceState is every key of namespace ns, Ballast's and asynq's, with
// its content: two equal states mean nothing was written between.
func namespaceState(t *testing.T, rdb *redis.Client, ns string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	for _, pattern := range queues.NewNamespace(ns).KeyPatterns() {
		iter := rdb.Scan(ctx, 0, pattern, 500).Iterator()
		for iter.Next(ctx) {
			out[iter.Val()] = keyContent(t, rdb, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestSnapshotOnlyReads: with a launch gone at the provider, a job whose
// spot budget is spent and a pinned job both waiting in plain burst, a
// snapshot leaves every key as it was; the tick after it closes the launch
// and re-homes both jobs, as the policy planned.
func TestSnapshotOnlyReads(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	t0 := time.Now().Add(-10 * time.Minute).Truncate(time.Millisecond)
	prov := &scriptedProvider{at: t0, insts: map[string]provider.Instance{}, hidden: map[string]bool{}}
	cfg := policy.DefaultConfig()
	cfg.MaxSpotPreemptions = 0 // no spot budget: every burst job is on-demand only
	h := &controller.Hybrid{Store: store, Launches: usage.New(store), Provider: prov, Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Pools: []policy.Pool{{Name: "spot", Kind: policy.PoolSpot, SlotsPerWorker: 1, MaxWorkers: 1, Billing: policy.BillingPerSecond}}}
	if err := h.Apply(ctx, policy.Plan{Actions: []policy.Action{{Kind: policy.ScaleUp, Pool: "spot", Count: 1}}}, t0); err != nil {
		t.Fatal(err)
	}
	prov.set("i-1", provider.Failed)
	spec := jobs.Spec{Command: []string{"true"}, Class: jobs.ClassBurst, Checkpointable: true, Retryable: true,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}
	spent, err := store.Submit(ctx, spec, queues.QueueBurst)
	if err != nil {
		t.Fatal(err)
	}
	spec.Labels = map[string]string{controller.RegionLabel: "eu-1"}
	pinned, err := store.Submit(ctx, spec, queues.QueueOnDemand)
	if err != nil {
		t.Fatal(err)
	}

	before := namespaceState(t, rdb, ns)
	s, err := h.Snapshot(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if after := namespaceState(t, rdb, ns); !maps.Equal(before, after) {
		t.Fatalf("Snapshot wrote to Redis: %d keys before, %d after", len(before), len(after))
	}
	homes := map[string]policy.ElasticHome{}
	for _, j := range s.Jobs {
		homes[j.ID] = j.Home
	}
	if homes[spent.Job.ID] != (policy.ElasticHome{Known: true}) ||
		homes[pinned.Job.ID] != (policy.ElasticHome{Known: true, OnDemand: true}) {
		t.Fatalf("snapshot homes %v", homes)
	}

	plan, err := h.Tick(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if plan.Count(policy.Rehome) != 2 {
		t.Fatalf("plan %s, want two rehomes", plan)
	}
	for id, want := range map[string]string{spent.Job.ID: "ondemand", pinned.Job.ID: "ondemand@eu-1"} {
		if j, _ := store.Get(ctx, id); j.Queue != want || j.Attempt != 2 || j.State != jobs.StateQueued {
			t.Errorf("%s: queue %s attempt %d state %s, want %s, attempt 2, queued", id, j.Queue, j.Attempt, j.State, want)
		}
	}
	if p, err := usage.New(store).PendingLaunches(ctx); err != nil || len(p) != 0 {
		t.Fatalf("the tick left launches open: %+v %v", p, err)
	}
	// Home now: the next tick moves nothing.
	if plan, err := h.Tick(ctx, time.Now()); err != nil || plan.Count(policy.Rehome) != 0 {
		t.Fatalf("second tick: %v %s", err, plan)
	}
}
