package e2e

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/redisinfo"
)

// TestSubmit500OnRedisSentinelThroughFailover is the foundation's 500-job
// NATS test on a master and a replica watched by three Sentinels, with the
// master killed (SIGKILL) once half the jobs are accepted. The Sentinels
// promote the replica and the failover client follows; nothing accepted
// may be lost or run twice.
func TestSubmit500OnRedisSentinelThroughFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Redis with Sentinels")
	}
	env := testenv.RedisSentinel(t)
	rdb, err := config.NewRedisClient(config.RedisConfig{Mode: config.RedisSentinel, Addrs: env.SentinelAddrs(),
		MasterName: testenv.SentinelMaster, DialTimeout: jobs.Duration(time.Second)}, 64)
	if err != nil {
		t.Fatal(err)
	}
	ns := "rs" + testenv.RandomHex(4)
	t.Cleanup(func() { _ = rdb.Close() })
	p := newPlaneOn(t, rdb, ns, countCatalog(t), &controller.Options{Tick: 200 * time.Millisecond,
		WorkerTTL: 10 * time.Second, LeaderTTL: 5 * time.Second})
	c := &counter{calls: map[string]int{}}
	startCountWorker(t, p, c)
	var promoted string
	run := submitThroughFailover(t, p, c, 500, 8, func() time.Duration {
		old := env.Master.Addr
		// As in the cluster test: the kill waits until the replica holds
		// what was accepted. In a clean-clone CI run it did not, and the
		// 255 jobs accepted last died with the master, which Redis's
		// asynchronous replication allows and only redis.wait_replicas
		// prevents; this test checks Ballast's part of a failover.
		if n, err := waitReplicated(t.Context(), old, queues.NewNamespace(ns).Outbox()); err != nil || n < 1 {
			t.Logf("the replica had not confirmed the writes before the kill (%d, %v)", n, err)
		}
		start := time.Now()
		env.Master.Kill()
		now, err := env.WaitPromoted(old, 30*time.Second)
		if err != nil {
			t.Error(err)
			return time.Since(start)
		}
		promoted = now
		t.Logf("killed master %s; the Sentinels promoted %s %s later", old, now, time.Since(start).Round(time.Millisecond))
		return time.Since(start)
	})
	if run.failover <= 0 {
		t.Fatal("no failover happened")
	}
	top := redisinfo.New(p.store).Topology(t.Context())
	if top.Mode != "sentinel" || len(top.Masters) != 1 || top.Masters[0] != promoted {
		t.Errorf("topology after the failover = %+v, want sentinel with master %s", top, promoted)
	}
}
