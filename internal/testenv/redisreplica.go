package testenv

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisReplicaPair is a master and one replica of it on loopback ports,
// with nothing on disk.
type RedisReplicaPair struct {
	Master, Replica *RedisNode
}

// RedisWithReplica starts a master and a replica of it and waits until the
// replica's link is up. Both are killed when the test ends. Without
// redis-server the test fails under CI and is skipped elsewhere.
func RedisWithReplica(t testing.TB) *RedisReplicaPair {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		Unavailable(t, "redis-server", err)
	}
	dir := t.TempDir()
	p := &RedisReplicaPair{}
	killWhenDone(t, func() []*RedisNode { return []*RedisNode{p.Master, p.Replica} })
	mp := testPort(t)
	if p.Master, err = newNode(bin, filepath.Join(dir, "master"), mp, "--appendonly", "no",
		"--repl-diskless-sync-delay", "0"); err != nil { // a replica syncs at once, not after 5 s
		t.Fatal(err)
	}
	if p.Replica, err = newNode(bin, filepath.Join(dir, "replica"), testPort(t), "--appendonly", "no",
		"--replicaof", "127.0.0.1", strconv.Itoa(mp)); err != nil {
		t.Fatal(err)
	}
	for _, n := range []*RedisNode{p.Master, p.Replica} {
		if err := waitPing(n.Addr, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := replicating(p.Replica.Addr)
		if err == nil {
			err = p.MasterSeesReplica()
		}
		if err == nil {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s of %s: %v", p.Replica.Addr, p.Master.Addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// MasterAddr is the master's host and port, split, for REPLICAOF.
func (p *RedisReplicaPair) MasterAddr() (host, port string) {
	h, pt, _ := strings.Cut(p.Master.Addr, ":")
	return h, pt
}

// String names both, for test logs.
func (p *RedisReplicaPair) String() string {
	return fmt.Sprintf("master %s, replica %s", p.Master.Addr, p.Replica.Addr)
}

// MasterSeesReplica is nil once the master counts its replica online: the
// replica's own link can be up a moment before, and a WAIT then counts
// nobody.
func (p *RedisReplicaPair) MasterSeesReplica() error {
	info, err := replicationInfo(p.Master.Addr)
	if err != nil {
		return err
	}
	if !strings.Contains(info, "state=online") {
		return fmt.Errorf("master %s: no replica online yet", p.Master.Addr)
	}
	return nil
}

// CutOff makes the replica a master of its own (REPLICAOF NO ONE) and
// waits until the master counts no replica: a WAIT on the master then
// counts nobody, as after the replica's host died, while both still
// answer.
func (p *RedisReplicaPair) CutOff(t testing.TB) {
	t.Helper()
	p.replicaOf(t, "NO", "ONE")
	Eventually(t, 5*time.Second, "the master to see no replica", func() bool {
		info, _ := replicationInfo(p.Master.Addr)
		return strings.Contains(info, "connected_slaves:0")
	})
}

// Reconnect makes the replica follow the master again and waits until
// it has caught up and the master counts it online.
func (p *RedisReplicaPair) Reconnect(t testing.TB) {
	t.Helper()
	host, port := p.MasterAddr()
	p.replicaOf(t, host, port)
	Eventually(t, 20*time.Second, "the replica to catch up", func() bool {
		return replicating(p.Replica.Addr) == nil && p.MasterSeesReplica() == nil
	})
}

func (p *RedisReplicaPair) replicaOf(t testing.TB, args ...string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: p.Replica.Addr})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Do(ctx, "REPLICAOF", args[0], args[1]).Err(); err != nil {
		t.Fatalf("REPLICAOF %s on %s: %v", strings.Join(args, " "), p.Replica.Addr, err)
	}
}

// Clients returns a client of the master and one of the replica, closed
// when the test ends.
func (p *RedisReplicaPair) Clients(t testing.TB) (master, replica *redis.Client) {
	master = redis.NewClient(&redis.Options{Addr: p.Master.Addr})
	replica = redis.NewClient(&redis.Options{Addr: p.Replica.Addr})
	t.Cleanup(func() { _ = master.Close(); _ = replica.Close() })
	return master, replica
}

// Stall stops the replica's process (SIGSTOP) and lets it run again
// after d, in the background; the channel gets the instant just before
// it was let go. The master keeps its link and counts the replica, but
// nothing the master writes meanwhile is acknowledged: a write answered
// after a WAIT for the replica cannot be answered before that instant.
func (p *RedisReplicaPair) Stall(t testing.TB, d time.Duration) <-chan time.Time {
	t.Helper()
	if err := p.Replica.signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("stopping replica %s: %v", p.Replica.Addr, err)
	}
	resumed := make(chan time.Time, 1)
	go func() {
		time.Sleep(d)
		at := time.Now()
		_ = p.Replica.signal(syscall.SIGCONT)
		resumed <- at
	}()
	// A test that fails first must not leave the replica stopped.
	t.Cleanup(func() { _ = p.Replica.signal(syscall.SIGCONT) })
	return resumed
}
