package gangs_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/queues"
)

// scriptCount counts the scripts a client sends, alone or in pipelines.
type scriptCount struct{ n atomic.Int64 }

func (c *scriptCount) count(cmds ...redis.Cmder) {
	for _, cmd := range cmds {
		if name := cmd.Name(); name == "evalsha" || name == "eval" {
			c.n.Add(1)
		}
	}
}

func (c *scriptCount) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *scriptCount) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.count(cmd); return next(ctx, cmd) }
}

func (c *scriptCount) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { c.count(cmds...); return next(ctx, cmds) }
}

// Without a replica wait, a member's check of a started gang is one read:
// the read made again to wait for the replicas is for a configured wait
// only.
func TestStartedBarrierIsOneReadWithoutReplicas(t *testing.T) {
	s, _ := newStore(t)
	id, ds := placedGang(t, s)
	startGang(t, s, id, ds)
	rdb := redis.NewClient(&redis.Options{Addr: s.Redis().(*redis.Client).Options().Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	var c scriptCount
	rdb.AddHook(&c)
	counted := storeOn(rdb, queues.StoreOptions{Namespace: s.Namespace().Name()})
	// The barrier's script is on the server already (startGang read it),
	// so each run is one EVALSHA.
	g, err := counted.Barrier(context.Background(), id, ds[0].Attempt)
	if err != nil || !g.Started {
		t.Fatalf("barrier = %+v, %v; want started", g, err)
	}
	if n := c.n.Load(); n != 1 {
		t.Fatalf("the check sent %d scripts, want 1", n)
	}
}
