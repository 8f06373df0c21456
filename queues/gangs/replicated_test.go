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

// TestBarrierWaitsForTheReplica: with WaitReplicas a member reads its
// gang as started only once the replica holds the start. The last
// member's claim starts the gang on the master while the replica is cut
// off, and that member does not act on it; the first member's barrier
// must not either, or it would run a gang that a failover then would
// show as never started. Once the replica is back the barrier opens.
func TestBarrierWaitsForTheReplica(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rg := newReplicatedGang(t, "gangbarrier")
	pair, master, s, cut, id, ds := rg.pair, rg.master, rg.s, rg.cut, rg.id, rg.ds
	if _, ok, err := s.ClaimMember(ctx, ds[0], 2, "w0", "i0", "h0:1"); !ok || err != nil {
		t.Fatalf("member 0's claim: %v %v", ok, err)
	}
	pair.CutOff(t)
	if _, ok, err := cut.ClaimMember(ctx, ds[1], 2, "w1", "i1", ""); ok || !errors.Is(err, jobs.ErrUnavailable) {
		t.Fatalf("member 1's claim no replica confirmed: ok %v, %v; want unavailable", ok, err)
	}
	if st, _ := master.HGet(ctx, s.Namespace().Job(id), "state").Result(); st != string(jobs.StateRunning) {
		t.Fatalf("the master says state %q after the last claim, want running (the test's premise)", st)
	}
	g, err := cut.Barrier(ctx, id, ds[0].Attempt)
	if g.Started || !errors.Is(err, jobs.ErrUnavailable) || !strings.Contains(err.Error(), "does not start") {
		t.Fatalf("barrier with the start on the master only: %+v, %v; want not started, unavailable, saying the member does not start", g, err)
	}

	pair.Reconnect(t)
	g, err = s.Barrier(ctx, id, ds[0].Attempt)
	if err != nil || !g.Started || g.Coordinator != "h0:1" {
		t.Fatalf("barrier once the replica is back: %+v, %v; want started at h0:1", g, err)
	}
}
