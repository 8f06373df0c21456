package gangs_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// TestMemberClaimsWaitForTheirReplica: with WaitReplicas a member's claim
// is answered only once the replica holds it, as a lone job's is. With the
// replica cut off, the last member's claim, which would start the gang, is
// refused as unavailable; once the replica is back, the same claim starts
// the gang, on the replica too.
func TestMemberClaimsWaitForTheirReplica(t *testing.T) {
	t.Parallel()
	pair := testenv.RedisWithReplica(t)
	ctx := context.Background()
	master, replica := pair.Clients(t)
	s := storeOn(master, queues.StoreOptions{Namespace: "gangwait", WaitReplicas: 1, WaitTimeout: 10 * time.Second})
	cut := storeOn(master, queues.StoreOptions{Namespace: "gangwait", WaitReplicas: 1, WaitTimeout: 200 * time.Millisecond})
	id, ds := placedGang(t, s)
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
