package queues_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/redisinfo"
)

// clusterStore is a store on the package's Redis Cluster, in a namespace
// of its own that is purged when the test ends.
func clusterStore(t *testing.T) (*queues.Store, *redis.ClusterClient, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a Redis Cluster")
	}
	cc := testenv.RedisCluster(t).Client(16)
	ns := "qc" + testenv.RandomHex(4)
	t.Cleanup(func() {
		testenv.DeleteNamespace(cc, ns)
		_ = cc.Close()
	})
	return queues.NewStore(cc, queues.StoreOptions{Namespace: ns}), cc, ns
}

// TestStoreOnRedisCluster drives a job through the scripts that touch the
// most keys at once (submit, claim, heartbeat, checkpoint, requeue, finish,
// recovery, cancel) on a real cluster: a script whose keys spanned slots
// would fail there with CROSSSLOT, which a single server never reports.
func TestStoreOnRedisCluster(t *testing.T) {
	s, cc, ns := clusterStore(t)
	ctx := context.Background()
	sub, err := s.Submit(ctx, spec("key-a"), queues.QueueCore)
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	if again, err := s.Submit(ctx, spec("key-a"), queues.QueueCore); err != nil || !again.Duplicate || again.Job.ID != sub.Job.ID {
		t.Fatalf("resubmit: %+v %v, want the same job as a duplicate", again, err)
	}
	if n := pending(t, s, queues.QueueCore); n != 1 {
		t.Fatalf("core pending = %d, want the task enqueued after the record", n)
	}
	w := queues.WorkerInfo{ID: "w1", Pool: "fixed", Slots: 2, StartedAt: time.Now()}
	if _, err := s.Register(ctx, w); err != nil {
		t.Fatalf("register: %v", err)
	}
	j, ok, err := s.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "w1")
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if _, err := s.Heartbeat(ctx, w, []queues.Delivery{{JobID: j.ID, Attempt: 1}}); err != nil {
		t.Fatalf("heartbeat: %v", err)
	}
	if ok, err := s.Checkpoint(ctx, j, "w1", "step-3"); err != nil || !ok {
		t.Fatalf("checkpoint: %v %v", ok, err)
	}
	later, err := s.Submit(ctx, spec(""), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Requeue(ctx, j, "w1", queues.Requeue{Reason: "drained"})
	if err != nil || r.Attempt != 2 {
		t.Fatalf("requeue: %+v %v", r, err)
	}
	// Readmitted: asynq's server, which consumes on a cluster from the
	// right, pops it before the job submitted after it (see readmit.go).
	// The first attempt's task, claimed without asynq here, stays stale.
	pendingKey := "asynq:{" + s.Namespace().AsynqQueue(queues.QueueCore) + "}:pending"
	ids, err := cc.LRange(ctx, pendingKey, 0, -1).Result()
	if err != nil || len(ids) == 0 || ids[len(ids)-1] != queues.TaskID(j.ID, 2) ||
		slices.Index(ids, queues.TaskID(later.Job.ID, 1)) < 0 {
		t.Fatalf("pending %v (%v): want the requeued attempt at the head (right), %s behind it", ids, err, later.Job.ID)
	}
	j2, ok, err := s.Claim(ctx, queues.Delivery{JobID: j.ID, Attempt: 2}, "w1")
	if err != nil || !ok {
		t.Fatalf("claim attempt 2: %v %v", ok, err)
	}
	code := 0
	if ok, err := s.Finish(ctx, j2, "w1", jobs.StateSucceeded, &code, ""); err != nil || !ok {
		t.Fatalf("finish: %v %v", ok, err)
	}

	// A job held by a worker that dies is requeued by recovery.
	subB, err := s.Submit(ctx, spec(""), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Claim(ctx, queues.Delivery{JobID: subB.Job.ID, Attempt: 1}, "w1"); err != nil || !ok {
		t.Fatalf("claim B: %v %v", ok, err)
	}
	rec, err := s.RecoverWorker(ctx, "w1")
	if err != nil || len(rec) != 1 || rec[0].JobID != subB.Job.ID || rec[0].Attempt != 2 {
		t.Fatalf("recover: %+v %v, want job B at attempt 2", rec, err)
	}
	res, err := s.Cancel(ctx, subB.Job.ID)
	if err != nil || res != queues.Cancelled {
		t.Fatalf("cancel: %v %v", res, err)
	}
	if got, _ := s.Get(ctx, sub.Job.ID); got.State != jobs.StateSucceeded || got.Checkpoint != "step-3" {
		t.Fatalf("job A: %+v", got)
	}

	top := redisinfo.New(s).Topology(ctx)
	if top.Mode != "cluster" || len(top.Masters) != 3 || top.SlotMaster == "" || top.HashTag != "{"+ns+"}" || top.Error != "" {
		t.Errorf("topology = %+v", top)
	}
}

// TestMigrateKeysOnRedisCluster moves old-layout keys, spread over slots,
// to the tagged names with RESTORE and DEL: values and expiries kept, a
// move that a crash cut between the two finished, a second run idle.
func TestMigrateKeysOnRedisCluster(t *testing.T) {
	_, cc, ns := clusterStore(t)
	ctx := context.Background()
	n := queues.NewNamespace(ns)
	old := n.LegacyPrefix()
	cc.HSet(ctx, old+"job:a", "state", "queued", "attempt", "1")
	cc.ZAdd(ctx, old+"jobs", redis.Z{Score: 1, Member: "a"})
	cc.Set(ctx, old+"idem:k", "a|f", time.Hour)
	// Interrupted: restored under the new name, old not yet deleted.
	cc.SAdd(ctx, old+"worker:w:jobs", "a")
	dump := cc.Dump(ctx, old+"worker:w:jobs").Val()
	if err := cc.Restore(ctx, n.Prefix()+"worker:w:jobs", 0, dump).Err(); err != nil {
		t.Fatal(err)
	}
	res, err := queues.MigrateKeys(ctx, cc, ns, queues.MigrateKeysOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total() != 4 || len(res.Conflicts) != 0 {
		t.Fatalf("moved %v conflicts %v, want 4 and none", res.Moved, res.Conflicts)
	}
	if v := cc.HGet(ctx, n.Job("a"), "state").Val(); v != "queued" {
		t.Errorf("job record after the move: state %q", v)
	}
	if ttl := cc.PTTL(ctx, n.Prefix()+"idem:k").Val(); ttl <= 0 || ttl > time.Hour {
		t.Errorf("idempotency key's expiry after the move: %s", ttl)
	}
	for _, k := range []string{"job:a", "jobs", "idem:k", "worker:w:jobs"} {
		if cc.Exists(ctx, old+k).Val() != 0 {
			t.Errorf("old key %s still there", old+k)
		}
	}
	if again, err := queues.MigrateKeys(ctx, cc, ns, queues.MigrateKeysOptions{}); err != nil || again.Total() != 0 {
		t.Fatalf("second run: %v %v, want nothing moved", again.Moved, err)
	}
	// A controller lease under the new name: refused.
	cc.Set(ctx, n.Leader(), "ctl-1", time.Minute)
	if _, err := queues.MigrateKeys(ctx, cc, ns, queues.MigrateKeysOptions{}); !errors.Is(err, queues.ErrInstallRunning) {
		t.Fatalf("with a leader: %v, want ErrInstallRunning", err)
	}
}
