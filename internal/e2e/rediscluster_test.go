package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/redisinfo"
)

// TestSubmit500OnRedisClusterThroughFailover is the foundation's 500-job
// NATS test on a Redis Cluster of three masters and three replicas, with
// the master that holds the namespace's slot killed (SIGKILL) once half
// the jobs are accepted. Its replica takes over after the node timeout;
// meanwhile submissions fail and are retried under their keys. Nothing
// accepted may be lost or run twice.
func TestSubmit500OnRedisClusterThroughFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Redis Cluster")
	}
	cl := testenv.RedisCluster(t)
	// The client every Ballast process builds from redis.mode: cluster.
	rdb, err := config.NewRedisClient(config.RedisConfig{Mode: config.RedisCluster, Addrs: cl.Seeds()[:1],
		DialTimeout: jobs.Duration(time.Second)}, 64)
	if err != nil {
		t.Fatal(err)
	}
	ns := "rc" + testenv.RandomHex(4)
	t.Cleanup(func() {
		testenv.DeleteNamespace(rdb, ns)
		_ = rdb.Close()
	})
	// A worker whose Redis fails over is silent for a few seconds: the
	// TTL must outlast that, or the controller requeues jobs it runs.
	p := newPlaneOn(t, rdb, ns, countCatalog(t), &controller.Options{Tick: 200 * time.Millisecond,
		WorkerTTL: 10 * time.Second, LeaderTTL: 5 * time.Second})
	c := &counter{calls: map[string]int{}}
	startCountWorker(t, p, c)

	nsKey := queues.NewNamespace(ns).Outbox()
	var killed, promoted string
	run := submitThroughFailover(t, p, c, 500, 8, func() time.Duration {
		old, err := cl.MasterOf(t.Context(), nsKey)
		if err != nil {
			t.Errorf("finding the namespace's master: %v", err)
			return 0
		}
		killed = old
		// Redis replicates asynchronously: a write the master acknowledged
		// and its replica has not received dies with the master. That
		// window is normally a few milliseconds; on a loaded machine it
		// was seconds, and every job accepted before the kill was lost
		// with it. What this test checks is Ballast's part (submissions
		// refused during the failover are retried under their keys,
		// nothing runs twice, everything the new master holds completes),
		// so the kill waits until the replica holds what was accepted.
		if n, err := waitReplicated(t.Context(), old, nsKey); err != nil || n < 1 {
			t.Logf("the replica had not confirmed the writes before the kill (%d, %v)", n, err)
		}
		start := time.Now()
		cl.Node(old).Kill()
		now, err := cl.WaitPromoted(nsKey, old, 30*time.Second)
		if err != nil {
			t.Error(err)
			return time.Since(start)
		}
		promoted = now
		t.Logf("killed master %s; %s serves the namespace's slot %s later", old, now, time.Since(start).Round(time.Millisecond))
		return time.Since(start)
	})
	if run.failover <= 0 {
		t.Fatal("no failover happened")
	}
	// Status shows the shard that holds the namespace now.
	top := redisinfo.New(p.store).Topology(t.Context())
	if top.Mode != "cluster" || len(top.Masters) != 3 || top.SlotMaster != promoted || top.HashTag != "{"+ns+"}" {
		t.Errorf("topology after the failover = %+v, want cluster, 3 masters, slot on %s", top, promoted)
	}
	// Put the killed node back (it rejoins as a replica), so the cluster
	// is whole for the package's next test.
	if n := cl.Node(killed); n != nil {
		if err := n.Restart(); err != nil {
			t.Fatal(err)
		}
		if err := cl.WaitHealthy(30 * time.Second); err != nil {
			t.Fatal(fmt.Errorf("after restarting %s: %w", killed, err))
		}
	}
}
