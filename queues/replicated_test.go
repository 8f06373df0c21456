package queues_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// waitingStores are two stores of namespace ns on master that wait for
// one replica: s with a long wait, for while the replica answers (a
// loaded machine may be slow to let a stalled one go), and cut with a
// short one (on the same records), for while it is cut off, which only
// makes a test quicker.
func waitingStores(master redis.UniversalClient, ns string) (s, cut *queues.Store) {
	return queues.NewStore(master, queues.StoreOptions{Namespace: ns, WaitReplicas: 1, WaitTimeout: 10 * time.Second}),
		queues.NewStore(master, queues.StoreOptions{Namespace: ns, WaitReplicas: 1, WaitTimeout: 200 * time.Millisecond})
}

// replicatedWorker is a master with one replica, waitingStores of
// namespace ns on it, and worker w registered there; onReplica reads the
// worker a job's record names on the replica.
func replicatedWorker(t *testing.T, ns string) (pair *testenv.RedisReplicaPair, s, cut *queues.Store, w queues.WorkerInfo,
	onReplica func(id string) string) {
	t.Helper()
	ctx := context.Background()
	pair = testenv.RedisWithReplica(t)
	master, replica := pair.Clients(t)
	s, cut = waitingStores(master, ns)
	w = queues.WorkerInfo{ID: "w1", Pool: "fixed", Slots: 2, Incarnation: "aaaa"}
	if _, err := s.Register(ctx, w); err != nil {
		t.Fatal(err)
	}
	onReplica = func(id string) string {
		v, _ := replica.HGet(ctx, s.Namespace().Job(id), "worker").Result()
		return v
	}
	return pair, s, cut, w, onReplica
}

// TestSubmissionsWaitForTheirReplica: with WaitReplicas a submission is
// answered as recorded only once the replica holds it. With the replica
// cut off, a lone submission and every job of a batch fail as unavailable,
// saying to resubmit; once it is back, the same submissions with the same
// keys find the very jobs, which the replica now holds.
func TestSubmissionsWaitForTheirReplica(t *testing.T) {
	t.Parallel()
	pair := testenv.RedisWithReplica(t)
	ctx := context.Background()
	master, replica := pair.Clients(t)
	s, cut := waitingStores(master, "wait")

	onReplica := func(id string) bool {
		n, err := replica.Exists(ctx, s.Namespace().Job(id)).Result()
		return err == nil && n == 1
	}
	first, err := s.Submit(ctx, spec("k-first"), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	if !onReplica(first.Job.ID) {
		t.Fatalf("job %s was answered recorded before the replica held it", first.Job.ID)
	}
	// Concurrent submissions travel in shared pipelines, each ending with
	// its WAIT, and a Redis that lost its scripts still answers them only
	// once they are replicated.
	if err := master.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 20)
	for i := range 20 {
		go func() {
			sub, err := s.Submit(ctx, spec(fmt.Sprintf("k-many-%d", i)), queues.QueueCore)
			if err == nil && !onReplica(sub.Job.ID) {
				err = fmt.Errorf("job %s was answered recorded before the replica held it", sub.Job.ID)
			}
			errs <- err
		}()
	}
	for range 20 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}

	// Cut the replica off: the master has none.
	pair.CutOff(t)
	items := refusedUnreplicated(t, cut, "k", 30)

	// The replica back: the same submissions find what the master holds.
	pair.Reconnect(t)
	foundAgain(t, s, "k", items, onReplica)
	if n, err := master.ZCard(ctx, s.Namespace().JobIndex()).Result(); err != nil || n != int64(22+len(items)) {
		t.Fatalf("%d jobs recorded (%v), want %d: a resubmission recorded a job twice", n, err, 22+len(items))
	}
}

// TestSubmissionsWaitForTheSlotsReplicaOnACluster: on a cluster the wait
// is for the replica of the master that holds the namespace's slot. With
// that replica killed (every other master keeps its own, so a WAIT sent to
// any other node would be answered), a lone submission and a batch are
// refused as unavailable; with it back, the same submissions find their
// jobs. Not parallel: it kills a node of the package's cluster, and
// restarts it and waits for the cluster to be whole before it ends.
func TestSubmissionsWaitForTheSlotsReplicaOnACluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Redis Cluster")
	}
	env := testenv.RedisCluster(t)
	cc := env.Client(16)
	ns := "qw" + testenv.RandomHex(4)
	t.Cleanup(func() {
		testenv.DeleteNamespace(cc, ns)
		_ = cc.Close()
	})
	ctx := context.Background()
	s := queues.NewStore(cc, queues.StoreOptions{Namespace: ns, WaitReplicas: 1})
	cut := queues.NewStore(cc, queues.StoreOptions{Namespace: ns, WaitReplicas: 1, WaitTimeout: 200 * time.Millisecond})
	master, err := env.MasterOf(ctx, s.Namespace().JobIndex())
	if err != nil {
		t.Fatal(err)
	}
	// A replica just synced may not show online in every node's view yet.
	var addr string
	testenv.Eventually(t, 20*time.Second, "the slot's replica to show online", func() bool {
		addr, err = env.ReplicaOf(ctx, s.Namespace().JobIndex())
		return err == nil
	})
	replica := env.Node(addr)
	if replica == nil {
		t.Fatalf("the cluster reports replica %s, which is none of its nodes", addr)
	}
	mc := redis.NewClient(&redis.Options{Addr: master})
	rc := redis.NewClient(&redis.Options{Addr: addr, // a cluster replica serves reads after READONLY
		OnConnect: func(ctx context.Context, cn *redis.Conn) error { return cn.ReadOnly(ctx).Err() }})
	t.Cleanup(func() { _ = mc.Close(); _ = rc.Close() })
	// The node the waiting submissions go to loads its scripts itself.
	if err := mc.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	first, err := s.Submit(ctx, spec("c-first"), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := rc.Exists(ctx, s.Namespace().Job(first.Job.ID)).Result(); err != nil || n != 1 {
		t.Fatalf("job %s was answered recorded before the slot's replica held it (%v)", first.Job.ID, err)
	}
	replica.Kill()
	t.Cleanup(func() {
		if !replica.Alive() {
			if err := replica.Restart(); err != nil {
				t.Errorf("restarting replica %s: %v", addr, err)
				return
			}
		} else if !t.Failed() {
			return // the test restarted it and saw the cluster whole
		}
		if err := env.WaitHealthy(60 * time.Second); err != nil {
			t.Error(err)
		}
	})
	testenv.Eventually(t, 10*time.Second, "the master to see its replica gone", func() bool {
		info, _ := mc.Info(ctx, "replication").Result()
		return strings.Contains(info, "connected_slaves:0")
	})

	items := refusedUnreplicated(t, cut, "c", 10)

	if err := replica.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := env.WaitHealthy(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	foundAgain(t, s, "c", items, func(id string) bool {
		n, err := rc.Exists(ctx, s.Namespace().Job(id)).Result()
		return err == nil && n == 1
	})
}

// refusedUnreplicated submits one job (key prefix-lone) and a batch of n
// through cut while no replica confirms them, checks that each is refused
// as unavailable, naming the resubmission, and returns the batch to send
// again.
func refusedUnreplicated(t *testing.T, cut *queues.Store, prefix string, n int) []queues.BatchItem {
	t.Helper()
	ctx := context.Background()
	_, err := cut.Submit(ctx, spec(prefix+"-lone"), queues.QueueCore)
	if !errors.Is(err, jobs.ErrUnavailable) || !strings.Contains(err.Error(), "same idempotency key") {
		t.Fatalf("a submission no replica confirmed: %v, want unavailable, naming the resubmission", err)
	}
	items := make([]queues.BatchItem, n)
	for i := range items {
		items[i] = queues.BatchItem{Spec: spec(fmt.Sprintf("%s-batch-%d", prefix, i)), Queue: queues.QueueCore}
	}
	res, err := cut.SubmitBatch(ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if !errors.Is(r.Err, jobs.ErrUnavailable) {
			t.Fatalf("batch job %d no replica confirmed: %v, want unavailable", i, r.Err)
		}
	}
	return items
}

// foundAgain sends refusedUnreplicated's submissions again through s, with
// the replica back, and checks that each finds the job recorded before and
// that the replica holds it (held).
func foundAgain(t *testing.T, s *queues.Store, prefix string, items []queues.BatchItem, held func(id string) bool) {
	t.Helper()
	ctx := context.Background()
	lone, err := s.Submit(ctx, spec(prefix+"-lone"), queues.QueueCore)
	if err != nil || !lone.Duplicate || !held(lone.Job.ID) {
		t.Fatalf("the lone submission again: %+v %v, want the job recorded before, on the replica", lone.Job.ID, err)
	}
	again, err := s.SubmitBatch(ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range again {
		if r.Err != nil || !r.Duplicate || !held(r.Job.ID) {
			t.Fatalf("batch job %d again: %+v dup %v %v, want the job recorded before, on the replica", i, r.Job.ID, r.Duplicate, r.Err)
		}
	}
}

// TestClaimsWaitForTheirReplica: with WaitReplicas a claim is answered
// only once the replica holds it, since a worker starts the job on it. With
// the replica cut off, the claim is refused as unavailable, saying the job
// does not start; once it is back, the same worker's redelivered claim
// gets the attempt, on the replica too, and another worker's is stale.
func TestClaimsWaitForTheirReplica(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pair, s, cut, w, onReplica := replicatedWorker(t, "claimwait")

	// With the replica stalled, the claim is answered only once it runs
	// again, and then the replica holds it.
	first, err := s.Submit(ctx, spec("claim-first"), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	resumed := pair.Stall(t, 300*time.Millisecond)
	if _, ok, err := s.ClaimAs(ctx, queues.Delivery{JobID: first.Job.ID, Attempt: 1}, w.ID, w.Incarnation); !ok || err != nil {
		t.Fatalf("the claim with the replica stalled: ok %v %v", ok, err)
	}
	if answered, at := time.Now(), <-resumed; answered.Before(at) {
		t.Fatalf("the claim was answered %s before the stalled replica ran again", at.Sub(answered))
	}
	if got := onReplica(first.Job.ID); got != w.ID {
		t.Fatalf("the replica says worker %q after the claim of %s, want %s", got, first.Job.ID, w.ID)
	}

	sub, err := s.Submit(ctx, spec("claim-cut"), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	pair.CutOff(t)
	d := queues.Delivery{JobID: sub.Job.ID, Attempt: 1}
	_, ok, err := cut.ClaimAs(ctx, d, w.ID, w.Incarnation)
	if ok || !errors.Is(err, jobs.ErrUnavailable) || !strings.Contains(err.Error(), "does not start") {
		t.Fatalf("a claim no replica confirmed: ok %v, %v; want unavailable, saying the job does not start", ok, err)
	}

	pair.Reconnect(t)
	j, ok, err := s.ClaimAs(ctx, d, w.ID, w.Incarnation)
	if !ok || err != nil || j.Worker != w.ID || j.State != jobs.StateRunning {
		t.Fatalf("the redelivered claim: ok %v worker %q state %s %v, want the attempt running on %s", ok, j.Worker, j.State, err, w.ID)
	}
	if got := onReplica(sub.Job.ID); got != w.ID {
		t.Fatalf("the replica says worker %q after the confirmed claim, want %s", got, w.ID)
	}
	other := queues.WorkerInfo{ID: "w2", Pool: "fixed", Slots: 2, Incarnation: "bbbb"}
	if _, err := s.Register(ctx, other); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.ClaimAs(ctx, d, other.ID, other.Incarnation); ok || err != nil {
		t.Fatalf("another worker's claim of the same attempt: ok %v %v, want stale", ok, err)
	}
}

// TestTakesWaitForTheirReplica: with WaitReplicas a take, which pops and
// claims in one script, is answered only once the replica holds it. With
// the replica cut off, the take is refused as unavailable, saying what it
// took does not start; the task is popped, so no redelivery brings the job
// back, and the worker's retry under the same token, once the replica is
// back, is answered with it, on the replica too.
func TestTakesWaitForTheirReplica(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pair, s, cut, w, onReplica := replicatedWorker(t, "takewait")
	c := queues.Claimant{Worker: w.ID, Incarnation: w.Incarnation, Pool: w.Pool}
	takeOne := func(s *queues.Store, token string, retry bool) (queues.Took, error) {
		return s.Take(ctx, queues.TakeRequest{Queues: []queues.Queue{queues.QueueCore}, Claimant: c, Max: 1, Token: token, Retry: retry})
	}

	first, err := s.Submit(ctx, spec("take-first"), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	resumed := pair.Stall(t, 300*time.Millisecond)
	took, err := takeOne(s, "t-stalled", false)
	if answered, at := time.Now(), <-resumed; answered.Before(at) {
		t.Fatalf("the take was answered %s before the stalled replica ran again", at.Sub(answered))
	}
	if err != nil || len(took.Jobs) != 1 || took.Jobs[0].ID != first.Job.ID {
		t.Fatalf("the take with the replica stalled: %+v %v; want %s", took, err, first.Job.ID)
	}
	if got := onReplica(first.Job.ID); got != w.ID {
		t.Fatalf("the replica says worker %q after the take of %s, want %s", got, first.Job.ID, w.ID)
	}

	sub, err := s.Submit(ctx, spec("take-cut"), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	pair.CutOff(t)
	took, err = takeOne(cut, "t-cut", false)
	if len(took.Jobs) != 0 || !errors.Is(err, jobs.ErrUnavailable) || !strings.Contains(err.Error(), "does not start") {
		t.Fatalf("a take no replica confirmed: %+v, %v; want nothing, unavailable, saying it does not start", took, err)
	}
	pair.Reconnect(t)
	took, err = takeOne(s, "t-cut", true)
	if err != nil || len(took.Jobs) != 1 || took.Jobs[0].ID != sub.Job.ID || took.Jobs[0].State != jobs.StateRunning {
		t.Fatalf("the retry of the take: %+v %v; want %s, running", took, err, sub.Job.ID)
	}
	if got := onReplica(sub.Job.ID); got != w.ID {
		t.Fatalf("the replica says worker %q after the confirmed retry, want %s", got, w.ID)
	}
}
