package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/controller"
	"github.com/ballastdev/ballast/queues"
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
	rdb := cl.Client(64)
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
	var killed string
	run := submitThroughFailover(t, p, c, 500, 8, func() time.Duration {
		old, err := cl.MasterOf(t.Context(), nsKey)
		if err != nil {
			t.Errorf("finding the namespace's master: %v", err)
			return 0
		}
		killed = old
		start := time.Now()
		cl.Node(old).Kill()
		now, err := cl.WaitPromoted(nsKey, old, 30*time.Second)
		if err != nil {
			t.Error(err)
			return time.Since(start)
		}
		t.Logf("killed master %s; %s serves the namespace's slot %s later", old, now, time.Since(start).Round(time.Millisecond))
		return time.Since(start)
	})
	if run.failover <= 0 {
		t.Fatal("no failover happened")
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
