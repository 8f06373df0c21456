package gangs_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/gangs"
)

// replicatedGang is a placed gang of two on a master with one replica,
// and two stores of namespace ns that wait for the replica: s long enough
// to outlast a stalled one, cut briefly, to be refused by a cut-off one.
type replicatedGang struct {
	pair            *testenv.RedisReplicaPair
	master, replica *redis.Client
	s, cut          *store
	id              string
	ds              []queues.Delivery
}

func newReplicatedGang(t *testing.T, ns string) replicatedGang {
	g := replicatedGang{pair: testenv.RedisWithReplica(t)}
	g.master, g.replica = g.pair.Clients(t)
	g.s = storeOn(g.master, queues.StoreOptions{Namespace: ns, WaitReplicas: 1, WaitTimeout: 10 * time.Second})
	g.cut = storeOn(g.master, queues.StoreOptions{Namespace: ns, WaitReplicas: 1, WaitTimeout: 200 * time.Millisecond})
	g.id, g.ds = placedGang(t, g.s)
	return g
}

// TestMemberClaimsWaitForTheirReplica: with WaitReplicas a member's claim
// is answered only once the replica holds it, as a lone job's is. With the
// replica cut off, the last member's claim, which would start the gang, is
// refused as unavailable; once the replica is back, the same claim starts
// the gang, on the replica too.
func TestMemberClaimsWaitForTheirReplica(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newReplicatedGang(t, "gangwait")
	pair, replica, s, cut, id, ds := g.pair, g.replica, g.s, g.cut, g.id, g.ds
	onReplica := func() string {
		v, _ := replica.HGet(ctx, s.Namespace().Job(id), "state").Result()
		return v
	}

	// With the replica stalled, member 0's claim is answered only once it
	// runs again.
	resumed := pair.Stall(t, 300*time.Millisecond)
	if _, ok, err := s.ClaimMember(ctx, ds[0], 2, "w0", "i0", "h0:1"); !ok || err != nil {
		t.Fatalf("member 0's claim with the replica stalled: %v %v", ok, err)
	}
	if answered, at := time.Now(), <-resumed; answered.Before(at) {
		t.Fatalf("member 0's claim was answered %s before the stalled replica ran again", at.Sub(answered))
	}
	pair.CutOff(t)
	_, ok, err := cut.ClaimMember(ctx, ds[1], 2, "w1", "i1", "")
	if ok || !errors.Is(err, jobs.ErrUnavailable) || !strings.Contains(err.Error(), "does not start") {
		t.Fatalf("member 1's claim no replica confirmed: ok %v, %v; want unavailable, saying the job does not start", ok, err)
	}

	pair.Reconnect(t)
	j, ok, err := s.ClaimMember(ctx, ds[1], 2, "w1", "i1", "")
	if !ok || err != nil || j.State != jobs.StateRunning {
		t.Fatalf("member 1's claim again: ok %v state %s %v, want the gang running", ok, j.State, err)
	}
	if got := onReplica(); got != string(jobs.StateRunning) {
		t.Fatalf("the replica says state %q after the confirmed claim, want running", got)
	}
}

// TestBarrierWaitsForAStalledReplica: with WaitReplicas a member reads
// its gang as started only once the replica holds the start. With the
// replica stalled, a start written on another connection is answered only
// once the replica runs again, to a client whose own connections wrote
// nothing: the WAIT must cover others' writes.
func TestBarrierWaitsForAStalledReplica(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rg := newReplicatedGang(t, "gangbarrier")
	pair, master, s := rg.pair, rg.master, rg.s
	// A store that does not wait: the start it writes is the master's alone.
	alone := storeOn(master, queues.StoreOptions{Namespace: "gangbarrier"})
	other := redis.NewClient(&redis.Options{Addr: master.Options().Addr})
	t.Cleanup(func() { _ = other.Close() })
	fresh := storeOn(other, queues.StoreOptions{Namespace: "gangbarrier", WaitReplicas: 1, WaitTimeout: 10 * time.Second})

	if _, ok, err := s.ClaimMember(ctx, rg.ds[0], 2, "w0", "i0", "h0:1"); !ok || err != nil {
		t.Fatalf("member 0's claim: %v %v", ok, err)
	}
	resumed := pair.Stall(t, 300*time.Millisecond)
	if j, ok, err := alone.ClaimMember(ctx, rg.ds[1], 2, "w1", "i1", ""); !ok || err != nil || j.State != jobs.StateRunning {
		t.Fatalf("member 1's claim on the master alone: ok %v state %s %v, want the gang running", ok, j.State, err)
	}
	g, err := fresh.Barrier(ctx, rg.id, rg.ds[0].Attempt)
	if answered, at := time.Now(), <-resumed; answered.Before(at) {
		t.Fatalf("the barrier was answered %s before the stalled replica ran again", at.Sub(answered))
	}
	if err != nil || !g.Started || g.Coordinator != "h0:1" {
		t.Fatalf("barrier once the stalled replica ran again: %+v, %v; want started at h0:1", g, err)
	}
}

// TestBarrierReadsAStartOnTheMasterAloneAsUnconfirmed: with the replica
// cut off, the last member's claim starts the gang on the master and is
// refused; member 0's barrier then reads the start as unconfirmed, not
// started, and once the replica is back as started. Before the start, a
// poll of the barrier does not wait for the cut-off replica: only a start
// is acted on.
func TestBarrierReadsAStartOnTheMasterAloneAsUnconfirmed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rg := newReplicatedGang(t, "gangunconfirmed")
	pair, master, s, cut, id, ds := rg.pair, rg.master, rg.s, rg.cut, rg.id, rg.ds
	if _, ok, err := s.ClaimMember(ctx, ds[0], 2, "w0", "i0", "h0:1"); !ok || err != nil {
		t.Fatalf("member 0's claim: %v %v", ok, err)
	}
	pair.CutOff(t)
	// s waits 10 s for a replica: a poll that waited would take that long.
	polled := time.Now()
	if g, err := s.Barrier(ctx, id, ds[0].Attempt); err != nil || g.Started || g.Moved || g.Unconfirmed != "" {
		t.Fatalf("barrier before the start: %+v, %v; want waiting", g, err)
	}
	if took := time.Since(polled); took > 5*time.Second {
		t.Fatalf("a poll before the start took %s: it waited for the replica, which only a start needs", took)
	}
	if _, ok, err := cut.ClaimMember(ctx, ds[1], 2, "w1", "i1", ""); ok || !errors.Is(err, jobs.ErrUnavailable) {
		t.Fatalf("member 1's claim no replica confirmed: ok %v, %v; want unavailable", ok, err)
	}
	if st, _ := master.HGet(ctx, s.Namespace().Job(id), "state").Result(); st != string(jobs.StateRunning) {
		t.Fatalf("the master says state %q after the last claim, want running (the test's premise)", st)
	}
	g, err := cut.Barrier(ctx, id, ds[0].Attempt)
	if err != nil || g.Started || g.Moved || !strings.Contains(g.Unconfirmed, "WAIT") {
		t.Fatalf("barrier with the start on the master only: %+v, %v; want not started and unconfirmed, saying what WAIT answered", g, err)
	}

	pair.Reconnect(t)
	g, err = s.Barrier(ctx, id, ds[0].Attempt)
	if err != nil || !g.Started || g.Coordinator != "h0:1" {
		t.Fatalf("barrier once the replica is back: %+v, %v; want started at h0:1", g, err)
	}
}

// TestJoinWaitsOutAnUnconfirmedStart: a member whose gang started on the
// master, but not yet on the replicas, neither starts nor gives the gang
// up at its start deadline (on the master the gang runs, and giving up
// would leave it without the member); it starts once the replicas hold
// the start.
func TestJoinWaitsOutAnUnconfirmedStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rg := newReplicatedGang(t, "gangjoinwait")
	pair, master, cut := rg.pair, rg.master, rg.cut
	type joined struct {
		g   gangs.Started
		err error
	}
	done := make(chan joined, 1)
	go func() {
		g, err := cut.Member(rg.ds[0], joiner("w0", 200*time.Millisecond)).Join(ctx)
		done <- joined{g, err}
	}()
	// Member 0's claim, replicated, before the replica is cut off.
	for i := 0; ; i++ {
		if v, _ := master.HGet(ctx, cut.Namespace().Job(rg.id), "m0").Result(); v != "" {
			break
		}
		if i == 200 {
			t.Fatal("member 0 did not claim within 2s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	pair.CutOff(t)
	if _, ok, err := cut.ClaimMember(ctx, rg.ds[1], 2, "w1", "iw1", ""); ok || !errors.Is(err, jobs.ErrUnavailable) {
		t.Fatalf("member 1's claim no replica confirmed: ok %v, %v; want unavailable", ok, err)
	}
	select {
	case j := <-done:
		t.Fatalf("member 0's Join returned (err %v) with the start unconfirmed; want it to wait", j.err)
	case <-time.After(1500 * time.Millisecond): // past the 200ms deadline and a recheck of the hold
	}
	pair.Reconnect(t)
	select {
	case j := <-done:
		if j.err != nil || j.g.Job.State != jobs.StateRunning || j.g.Coordinator == "" {
			t.Fatalf("member 0's Join once the replica is back: %+v, %v; want started", j.g, j.err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("member 0 did not start within 15s of the replica's return")
	}
}
