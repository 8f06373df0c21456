package controller

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/gangs"
	"github.com/ballastdev/ballast/queues/leader"
	"github.com/ballastdev/ballast/queues/registry"
)

// liveDiff compares the view h keeps across ticks with a full read made now
// by a controller holding the same local state (preemptions in flight,
// overflows, idle clocks), and returns the first difference, "" if none.
func liveDiff(t *testing.T, h *Hybrid, now time.Time) string {
	t.Helper()
	if err := h.live.ix.Check(); err != nil {
		return err.Error()
	}
	h.mu.Lock()
	ref := &Hybrid{Store: h.Store, Config: h.Config, Pools: h.Pools, Logger: h.Logger}
	ref.init()
	ref.inflight, ref.overflowTo = maps.Clone(h.inflight), maps.Clone(h.overflowTo)
	ref.idleSince, ref.launched, ref.stockOut = maps.Clone(h.idleSince), maps.Clone(h.launched), maps.Clone(h.stockOut)
	got := h.live.ix.Snapshot()
	seen, attempts := maps.Clone(h.seen), maps.Clone(h.attempts)
	h.mu.Unlock()
	s, err := ref.Snapshot(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	want := policy.IndexOf(s).Snapshot()
	if len(got.Jobs) != len(want.Jobs) {
		return fmt.Sprintf("%d jobs kept, %d read", len(got.Jobs), len(want.Jobs))
	}
	for i := range got.Jobs {
		if !reflect.DeepEqual(got.Jobs[i], want.Jobs[i]) {
			return fmt.Sprintf("job kept as %+v, read as %+v", got.Jobs[i], want.Jobs[i])
		}
	}
	if !reflect.DeepEqual(got.Workers, want.Workers) {
		return fmt.Sprintf("workers kept as %+v, read as %+v", got.Workers, want.Workers)
	}
	if !reflect.DeepEqual(got.Launches, want.Launches) {
		return fmt.Sprintf("launches kept as %+v, read as %+v", got.Launches, want.Launches)
	}
	for id, j := range ref.seen {
		if !reflect.DeepEqual(seen[id], j) || attempts[id] != ref.attempts[id] {
			return fmt.Sprintf("record of %s kept as %+v (attempt %d), read as %+v", id, seen[id], attempts[id], j)
		}
	}
	if len(seen) != len(ref.seen) || len(attempts) != len(ref.attempts) {
		return fmt.Sprintf("%d records and %d attempts kept, %d read", len(seen), len(attempts), len(ref.seen))
	}
	return ""
}

// TestLiveViewMatchesAFullRead runs a random sequence of real store
// operations (submit, claim, finish, requeue, cancel, checkpoint, moves,
// placements and gangs, workers coming, draining and going) between
// ticks, and after every tick checks that the view kept by reading only
// what changed equals a full read. Moves, placements and checkpoints are
// hinted, as the controller's own actions and job events hint them; every
// other change must be found from the store alone.
func TestLiveViewMatchesAFullRead(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 17))
	h := &Hybrid{Store: store, Config: policy.DefaultConfig(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		RebuildEvery: time.Hour,
		Pools: []policy.Pool{
			{Name: "fixed", Kind: policy.PoolFixed},
			{Name: "ondemand", Kind: policy.PoolOnDemand, PricePerSlotHour: 2.5, Billing: policy.BillingPerSecond,
				MaxWorkers: 10, SlotsPerWorker: 4, IdleTTL: time.Minute},
		}}
	spec := func(class jobs.Class, z jobs.Size) jobs.Spec {
		return jobs.Spec{Command: []string{"true"}, Class: class, Retryable: true, Checkpointable: class == jobs.ClassBurst,
			Timeout: jobs.Duration(time.Hour), Grace: jobs.Duration(time.Second), Size: z}
	}
	workers := map[string]bool{}
	od, started := 0, 0
	register := func(id, pool string) {
		if _, err := store.Heartbeat(ctx, queues.WorkerInfo{ID: id, Pool: pool, Slots: 4, StartedAt: time.Now(),
			PlaceQueue: string(queues.PlaceQueue(id))}, nil); err != nil {
			t.Fatal(err)
		}
		workers[id] = true
	}
	for i := range 4 {
		register(fmt.Sprintf("f%d", i), "fixed")
	}
	pickWorker := func() string {
		ids := slices.Sorted(maps.Keys(workers))
		return ids[rng.IntN(len(ids))]
	}
	// jobsIn lists the active jobs in a state, by the store.
	jobsIn := func(st jobs.State, placed bool) []jobs.Job {
		all, err := store.ActiveJobs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []jobs.Job
		for _, j := range all {
			if j.State == st && (len(j.Placed) > 0) == placed && (placed || !j.Spec.Size.Sized()) {
				out = append(out, j)
			}
		}
		return out
	}
	pick := func(js []jobs.Job) (jobs.Job, bool) {
		if len(js) == 0 {
			return jobs.Job{}, false
		}
		return js[rng.IntN(len(js))], true
	}
	ops := []func() string{
		func() string { // submit
			class, q := jobs.ClassCore, queues.QueueCore
			if rng.IntN(2) == 0 {
				class, q = jobs.ClassBurst, queues.QueueBurst
			}
			if _, err := store.Submit(ctx, spec(class, jobs.Size{}), q); err != nil {
				t.Fatal(err)
			}
			return "submit"
		},
		func() string { // claim
			j, ok := pick(jobsIn(jobs.StateQueued, false))
			if !ok {
				return ""
			}
			if _, ok, err := store.Claim(ctx, queues.Delivery{JobID: j.ID, Attempt: j.Attempt}, pickWorker()); err != nil || !ok {
				t.Fatalf("claim: %v %v", ok, err)
			}
			return "claim"
		},
		func() string { // finish
			j, ok := pick(jobsIn(jobs.StateRunning, false))
			if !ok {
				return ""
			}
			if _, err := store.Finish(ctx, j, j.Worker, jobs.StateSucceeded, new(int), ""); err != nil {
				t.Fatal(err)
			}
			return "finish"
		},
		func() string { // requeue, and sometimes claim again at once
			j, ok := pick(jobsIn(jobs.StateRunning, false))
			if !ok {
				return ""
			}
			r, err := store.Requeue(ctx, j, j.Worker, queues.Requeue{Reason: "test", Spot: rng.IntN(2) == 0, Preempt: true})
			if err != nil {
				t.Fatal(err)
			}
			if rng.IntN(2) == 0 {
				if _, ok, err := store.Claim(ctx, queues.Delivery{JobID: j.ID, Attempt: r.Attempt}, j.Worker); err != nil || !ok {
					t.Fatalf("claim again: %v %v", ok, err)
				}
			}
			return "requeue"
		},
		func() string { // cancel a queued job
			j, ok := pick(jobsIn(jobs.StateQueued, false))
			if !ok {
				return ""
			}
			if _, err := store.Cancel(ctx, j.ID); err != nil {
				t.Fatal(err)
			}
			return "cancel"
		},
		func() string { // checkpoint, hinted as its event would
			j, ok := pick(jobsIn(jobs.StateRunning, false))
			if !ok {
				return ""
			}
			if _, err := store.Checkpoint(ctx, j, j.Worker, "cp"); err != nil {
				t.Fatal(err)
			}
			h.Changed(j.ID)
			return "checkpoint"
		},
		func() string { // move, hinted as the controller's own
			j, ok := pick(jobsIn(jobs.StateQueued, false))
			if !ok {
				return ""
			}
			to := queues.QueueLoan
			if j.Spec.Class == jobs.ClassCore {
				to = queues.QueueOverflow
			}
			if _, err := store.Move(ctx, j.ID, j.Attempt, to, "test"); err != nil {
				t.Fatal(err)
			}
			h.Changed(j.ID)
			return "move"
		},
		func() string { // a gang placed on two workers, hinted, and maybe started
			sub, err := store.Submit(ctx, spec(jobs.ClassCore, jobs.Size{Slots: 2, Replicas: 2}), queues.QueueCore)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.Tick(ctx, time.Now()); err != nil { // the policy places it, or not
				t.Fatal(err)
			}
			ws := []string{pickWorker(), pickWorker()}
			a, err := store.Place(ctx, sub.Job.ID, 1, ws)
			if err != nil {
				t.Fatal(err)
			}
			h.Changed(sub.Job.ID)
			// Half the placed gangs start; the first always does, so
			// that a sequence with few gangs still has one started.
			if a == 0 || started > 0 && rng.IntN(2) == 0 {
				return "place"
			}
			started++
			for i, w := range ws {
				d := queues.Delivery{JobID: sub.Job.ID, Attempt: a, Slots: 2, Member: i, Members: 2}
				if _, _, err := gangs.New(store).ClaimMember(ctx, d, 2, w, "", fmt.Sprintf("h:%d", i)); err != nil {
					t.Fatal(err)
				}
			}
			return "gang"
		},
		func() string { // a worker comes, drains or goes
			switch id := pickWorker(); rng.IntN(3) {
			case 0:
				// A new ID: a worker that left does not come back
				// under its old one.
				od++
				register(fmt.Sprintf("od%d", od), "ondemand")
			case 1:
				if err := registry.New(store).RequestDrain(ctx, id); err != nil {
					t.Fatal(err)
				}
			default:
				if len(workers) > 2 {
					if err := store.Deregister(ctx, id); err != nil {
						t.Fatal(err)
					}
					delete(workers, id)
				}
			}
			return "worker"
		},
	}
	for range 12 {
		ops[0]()
	}
	done := map[string]int{}
	for tick := range 60 {
		for range 1 + rng.IntN(4) {
			if op := ops[rng.IntN(len(ops))](); op != "" {
				done[op]++
			}
		}
		// Compared before the plan is applied: what Apply writes is
		// for the next tick to read.
		now := time.Now()
		ix, instances, err := h.tickIndex(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		if h.live == nil {
			t.Fatalf("tick %d kept no view", tick)
		}
		if d := liveDiff(t, h, now); d != "" {
			t.Fatalf("tick %d after %v: %s", tick, done, d)
		}
		if _, err := h.act(ctx, ix, instances, now); err != nil {
			t.Fatal(err)
		}
	}
	// A case that exercises too little proves nothing.
	if h.live != nil {
		t.Logf("ticks since the last rebuild that read the active index whole: %d (%v)", h.live.wholeReads, done)
	}
	for _, op := range []string{"submit", "claim", "finish", "requeue", "cancel", "checkpoint", "move", "place", "gang", "worker"} {
		if done[op] == 0 {
			t.Errorf("no %s in the sequence (%v): raise the tick count", op, done)
		}
	}
}

// oneRunningJob is a store with fixed worker f0 running one core job.
func oneRunningJob(t *testing.T) (*redis.Client, *queues.Store, queues.Submitted) {
	t.Helper()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	if _, err := store.Heartbeat(ctx, queues.WorkerInfo{ID: "f0", Pool: "fixed", Slots: 4, StartedAt: time.Now()}, nil); err != nil {
		t.Fatal(err)
	}
	sub, err := store.Submit(ctx, jobs.Spec{Command: []string{"true"}, Class: jobs.ClassCore, Timeout: jobs.Duration(time.Hour),
		Grace: jobs.Duration(time.Second)}, queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := store.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "f0"); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	return rdb, store, sub
}

// TestLiveViewMissesWhatNoSignalReports: a record changed behind every
// signal's back (here by hand) stays unseen, which the comparison of
// TestLiveViewMatchesAFullRead detects; a hint, or the next rebuild, finds
// it.
func TestLiveViewMissesWhatNoSignalReports(t *testing.T) {
	t.Parallel()
	rdb, store, sub := oneRunningJob(t)
	ctx := context.Background()
	h := fixedHybrid(store, time.Minute)
	t0 := time.Now()
	if _, err := h.Tick(ctx, t0); err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(ctx, store.Namespace().Job(sub.Job.ID), "checkpoint_at", t0.Add(time.Second).UnixMilli()).Err(); err != nil {
		t.Fatal(err)
	}
	tick := func(now time.Time) string {
		t.Helper()
		if _, _, err := h.tickIndex(ctx, now); err != nil {
			t.Fatal(err)
		}
		return liveDiff(t, h, now)
	}
	if d := tick(t0.Add(time.Second)); d == "" {
		t.Fatal("a change no signal reported was seen: the comparison proves nothing")
	}
	h.Changed(sub.Job.ID)
	if d := tick(t0.Add(2 * time.Second)); d != "" {
		t.Fatalf("after the hint: %s", d)
	}
	if err := rdb.HSet(ctx, store.Namespace().Job(sub.Job.ID), "checkpoint_at", t0.Add(3*time.Second).UnixMilli()).Err(); err != nil {
		t.Fatal(err)
	}
	if d := tick(t0.Add(h.RebuildEvery)); d != "" {
		t.Fatalf("after the rebuild: %s", d)
	}
}

// A controller that leads again after another did reads everything: the
// other leader, or anyone, may have changed records it has no signal of.
func TestLeadingAgainRebuildsTheView(t *testing.T) {
	t.Parallel()
	rdb, store, sub := oneRunningJob(t)
	ctx := context.Background()
	h := fixedHybrid(store, time.Hour)
	c, err := New(store, Options{ID: "a", Tick: 50 * time.Millisecond, WorkerTTL: time.Minute, LeaderTTL: time.Minute,
		Capacity: h, Logger: h.Logger})
	if err != nil {
		t.Fatal(err)
	}
	checkpointAt := func() time.Time {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.seen[sub.Job.ID].CheckpointAt
	}
	c.Tick(ctx)
	if !c.Leader() || h.live == nil {
		t.Fatal("a does not lead with a view")
	}
	if err := leader.New(store).Resign(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if ok, err := leader.New(store).Acquire(ctx, "b", time.Minute); err != nil || !ok {
		t.Fatalf("b leads: %v %v", ok, err)
	}
	c.Tick(ctx)
	if c.Leader() {
		t.Fatal("a still leads")
	}
	at := time.Now().Add(time.Second).Truncate(time.Millisecond)
	if err := rdb.HSet(ctx, store.Namespace().Job(sub.Job.ID), "checkpoint_at", at.UnixMilli()).Err(); err != nil {
		t.Fatal(err)
	}
	if err := leader.New(store).Resign(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	c.Tick(ctx)
	if !c.Leader() {
		t.Fatal("a does not lead again")
	}
	if got := checkpointAt(); !got.Equal(at) {
		t.Fatalf("checkpoint at %v after leading again, want %v from a full read", got, at)
	}
}

// Hints are bounded: past maxHints between two ticks the next tick
// rebuilds instead of keeping them all; below, it keeps its view.
func TestAFloodOfHintsBecomesOneRebuild(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	h := fixedHybrid(store, time.Hour)
	now := time.Now()
	if _, err := h.Tick(ctx, now); err != nil {
		t.Fatal(err)
	}
	first := h.live
	h.Changed("a", "b", "no-such-job")
	if _, err := h.Tick(ctx, now.Add(time.Second)); err != nil || h.live != first {
		t.Fatalf("a few hints: view kept %v, err %v", h.live == first, err)
	}
	for i := range maxHints + 1 {
		h.Changed(fmt.Sprintf("forged-%d", i))
	}
	if n := len(h.hints.ids); n != maxHints {
		t.Fatalf("%d hints kept, want at most %d", n, maxHints)
	}
	if _, err := h.Tick(ctx, now.Add(2*time.Second)); err != nil || h.live == first || h.live == nil {
		t.Fatalf("a flood: view rebuilt %v, err %v", h.live != first, err)
	}
}

// TestTickReadsTheActiveIndexWholeOnlyWhenItMust: a tick reads only what
// was added to the active index since the last, and learns what left it
// from the attempts that ended, as long as the two add up to the index's
// count. A queued job cancelled leaves no ended attempt: that tick reads
// the index whole. The view matches a full read throughout.
func TestTickReadsTheActiveIndexWholeOnlyWhenItMust(t *testing.T) {
	t.Parallel()
	_, store, sub := oneRunningJob(t)
	ctx := context.Background()
	h := fixedHybrid(store, time.Hour)
	t0 := time.Now()
	step := 0
	tick := func(what string) {
		t.Helper()
		step++
		now := t0.Add(time.Duration(step) * time.Second)
		if _, _, err := h.tickIndex(ctx, now); err != nil {
			t.Fatal(err)
		}
		if d := liveDiff(t, h, now); d != "" {
			t.Fatalf("after %s: %s", what, d)
		}
	}
	submit := func() jobs.Job {
		t.Helper()
		s, err := store.Submit(ctx, jobs.Spec{Command: []string{"true"}, Class: jobs.ClassCore, Timeout: jobs.Duration(time.Hour),
			Grace: jobs.Duration(time.Second)}, queues.QueueCore)
		if err != nil {
			t.Fatal(err)
		}
		return s.Job
	}
	tick("the first tick (a rebuild)")
	queued := []jobs.Job{submit(), submit(), submit()}
	tick("three submissions")
	if _, err := store.Finish(ctx, sub.Job, "f0", jobs.StateSucceeded, nil, ""); err != nil {
		t.Fatal(err)
	}
	tick("a finish")
	j, ok, err := store.Claim(ctx, queues.Delivery{JobID: queued[0].ID, Attempt: 1}, "f0")
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if _, err := store.Requeue(ctx, j, "f0", queues.Requeue{Retry: true, Reason: "exit 1"}); err != nil {
		t.Fatal(err)
	}
	tick("a retry")
	if n := h.live.wholeReads; n != 0 {
		t.Fatalf("%d ticks read the active index whole; what changed added up every time", n)
	}
	if _, err := store.Cancel(ctx, queued[1].ID); err != nil {
		t.Fatal(err)
	}
	tick("a queued job's cancel")
	if n := h.live.wholeReads; n != 0 {
		t.Fatalf("%d whole reads after a queued cancel, want none: its departure says it left", n)
	}
	submit()
	tick("a submission after it")
	if n := h.live.wholeReads; n != 0 {
		t.Fatalf("%d whole reads, want still none", n)
	}
	// A submission stamped by a clock well behind the cursor is not among
	// the additions read: the count does not add up, and that tick reads
	// the index whole. A queued cancel in the same tick, which used to
	// make the count add up again (one unseen in, one unseen out), does
	// not hide it any more.
	behind := queues.NewStore(store.Redis(), queues.StoreOptions{Namespace: store.Namespace().Name(),
		Now: func() time.Time { return time.Now().Add(-time.Minute) }})
	if _, err := behind.Submit(ctx, jobs.Spec{Command: []string{"true"}, Class: jobs.ClassCore, Timeout: jobs.Duration(time.Hour),
		Grace: jobs.Duration(time.Second)}, queues.QueueCore); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Cancel(ctx, queued[2].ID); err != nil {
		t.Fatal(err)
	}
	tick("a late-stamped submission and a queued cancel")
	if n := h.live.wholeReads; n != 1 {
		t.Fatalf("%d whole reads, want 1: the late submission must be found", n)
	}
	// A cancel by a clock an hour ahead (an operator's machine) stamps its
	// departure an hour on; the ends after it are still read as they come.
	running, ok, err := store.Claim(ctx, queues.Delivery{JobID: submit().ID, Attempt: 1}, "f0")
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	waiting := submit()
	tick("a claim and a submission")
	ahead := queues.NewStore(store.Redis(), queues.StoreOptions{Namespace: store.Namespace().Name(),
		Now: func() time.Time { return time.Now().Add(time.Hour) }})
	if _, err := ahead.Cancel(ctx, waiting.ID); err != nil {
		t.Fatal(err)
	}
	tick("a cancel stamped an hour ahead")
	// The finish is stamped by the leader's clock, which this test steps.
	onTime := queues.NewStore(store.Redis(), queues.StoreOptions{Namespace: store.Namespace().Name(),
		Now: func() time.Time { return t0.Add(time.Duration(step) * time.Second) }})
	if _, err := onTime.Finish(ctx, running, "f0", jobs.StateSucceeded, nil, ""); err != nil {
		t.Fatal(err)
	}
	tick("a finish after it")
	if n := h.live.wholeReads; n != 1 {
		t.Fatalf("%d whole reads, want still 1: the finish after a cancel stamped ahead was not read", n)
	}
}

// fixedHybrid is a leader over store with one fixed pool and the default
// config, rebuilding its view every rebuild.
func fixedHybrid(store *queues.Store, rebuild time.Duration) *Hybrid {
	return &Hybrid{Store: store, Config: policy.DefaultConfig(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		RebuildEvery: rebuild, Pools: []policy.Pool{{Name: "fixed", Kind: policy.PoolFixed}}}
}

// TestTheViewEmptiesWithTheIndex: the last queued job cancelled leaves an
// empty index, read whole; the view must drop the job, not take the empty
// read for "nothing changed".
func TestTheViewEmptiesWithTheIndex(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	if _, err := store.Heartbeat(ctx, queues.WorkerInfo{ID: "f0", Pool: "fixed", Slots: 4, StartedAt: time.Now()}, nil); err != nil {
		t.Fatal(err)
	}
	h := fixedHybrid(store, time.Hour)
	t0 := time.Now()
	for i, step := range []func(){
		func() {},
		func() {
			if _, err := store.Submit(ctx, jobs.Spec{Command: []string{"true"}, Class: jobs.ClassCore, Timeout: jobs.Duration(time.Hour),
				Grace: jobs.Duration(time.Second)}, queues.QueueCore); err != nil {
				t.Fatal(err)
			}
		},
		func() {
			all, err := store.ActiveJobs(ctx)
			if err != nil || len(all) != 1 {
				t.Fatalf("active jobs: %v %v", all, err)
			}
			if _, err := store.Cancel(ctx, all[0].ID); err != nil {
				t.Fatal(err)
			}
		},
	} {
		step()
		now := t0.Add(time.Duration(i) * time.Second)
		if _, _, err := h.tickIndex(ctx, now); err != nil {
			t.Fatal(err)
		}
		if d := liveDiff(t, h, now); d != "" {
			t.Fatalf("after step %d: %s", i, d)
		}
	}
	if n := len(h.live.members); n != 0 {
		t.Fatalf("%d jobs kept as active in an empty index", n)
	}
}
