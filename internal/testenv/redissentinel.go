package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelMaster is the name the test Sentinels know their master by.
const SentinelMaster = "ballast-test"

// RedisSentinelEnv is a master, one replica and three Sentinels on loopback
// ports, with a down-after of one second so a killed master is replaced
// within a few seconds.
type RedisSentinelEnv struct {
	Master, Replica *RedisNode
	Sentinels       []*RedisNode
}

// SentinelAddrs are the Sentinels' addresses, for redis.addrs.
func (e *RedisSentinelEnv) SentinelAddrs() []string {
	out := make([]string, len(e.Sentinels))
	for i, n := range e.Sentinels {
		out[i] = n.Addr
	}
	return out
}

// Client returns a Sentinel-backed failover client; the caller closes it.
func (e *RedisSentinelEnv) Client(poolSize int) *redis.Client {
	return redis.NewFailoverClient(&redis.FailoverOptions{MasterName: SentinelMaster, SentinelAddrs: e.SentinelAddrs(),
		PoolSize: poolSize, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
}

// RedisSentinel starts the master, its replica and three Sentinels, and
// waits until the Sentinels agree on the master and see the replica and
// each other. Everything is killed when the test ends. Without
// redis-server the test fails under CI and is skipped elsewhere.
func RedisSentinel(t testing.TB) *RedisSentinelEnv {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		Unavailable(t, "redis-server", err)
	}
	dir := t.TempDir()
	e := &RedisSentinelEnv{}
	killWhenDone(t, func() []*RedisNode { return append([]*RedisNode{e.Master, e.Replica}, e.Sentinels...) })
	port := func() int { return testPort(t) }
	mp := port()
	if e.Master, err = newNode(bin, filepath.Join(dir, "master"), mp, "--appendonly", "yes"); err != nil {
		t.Fatal(err)
	}
	if e.Replica, err = newNode(bin, filepath.Join(dir, "replica"), port(), "--appendonly", "yes",
		"--replicaof", "127.0.0.1", strconv.Itoa(mp)); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		sp := port()
		sdir := filepath.Join(dir, "sentinel"+strconv.Itoa(i))
		if err := os.MkdirAll(sdir, 0o755); err != nil {
			t.Fatal(err)
		}
		// Sentinel rewrites its config file as it learns, so each has its own.
		conf := filepath.Join(sdir, "sentinel.conf")
		body := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor %s 127.0.0.1 %d 2\n"+
			"sentinel down-after-milliseconds %s 1000\nsentinel failover-timeout %s 10000\nsentinel parallel-syncs %s 1\n",
			sp, sdir, SentinelMaster, mp, SentinelMaster, SentinelMaster, SentinelMaster)
		if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		n := &RedisNode{Addr: "127.0.0.1:" + strconv.Itoa(sp), argv: []string{conf, "--sentinel"}, bin: bin, dir: sdir}
		if err := n.start(); err != nil {
			t.Fatal(err)
		}
		e.Sentinels = append(e.Sentinels, n)
	}
	for _, n := range append([]*RedisNode{e.Master, e.Replica}, e.Sentinels...) {
		if err := waitPing(n.Addr, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.waitReady(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	return e
}

// waitReady waits until the replica replicates and every Sentinel names
// the master, knows the replica and the two other Sentinels.
func (e *RedisSentinelEnv) waitReady(within time.Duration) error {
	deadline := time.Now().Add(within)
	var last error
	for time.Now().Before(deadline) {
		if last = e.ready(); last == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("sentinels not ready within %s: %w", within, last)
}

func (e *RedisSentinelEnv) ready() error {
	if err := replicating(e.Replica.Addr); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, s := range e.Sentinels {
		sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr, DialTimeout: 200 * time.Millisecond})
		m, err := sc.GetMasterAddrByName(ctx, SentinelMaster).Result()
		if err == nil && strings.Join(m, ":") != e.Master.Addr {
			err = fmt.Errorf("sentinel %s names %v as master", s.Addr, m)
		}
		var reps, sens []map[string]string
		if err == nil {
			reps, err = sc.Replicas(ctx, SentinelMaster).Result()
		}
		if err == nil {
			sens, err = sc.Sentinels(ctx, SentinelMaster).Result()
		}
		_ = sc.Close()
		if err != nil {
			return err
		}
		if len(reps) < 1 || len(sens) < 2 {
			return fmt.Errorf("sentinel %s knows %d replicas and %d other sentinels", s.Addr, len(reps), len(sens))
		}
	}
	return nil
}

// WaitPromoted waits until a Sentinel names a master other than old and
// that node answers as a master, and returns its address.
func (e *RedisSentinelEnv) WaitPromoted(old string, within time.Duration) (string, error) {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		for _, s := range e.Sentinels {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr, DialTimeout: 200 * time.Millisecond})
			m, err := sc.GetMasterAddrByName(ctx, SentinelMaster).Result()
			_ = sc.Close()
			if err == nil {
				addr := strings.Join(m, ":")
				if addr != old && isMaster(ctx, addr) {
					cancel()
					return addr, nil
				}
			}
			cancel()
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "", errors.New("no replica was promoted within " + within.String())
}

func isMaster(ctx context.Context, addr string) bool {
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	info, err := c.Info(ctx, "replication").Result()
	return err == nil && strings.Contains(info, "role:master")
}
