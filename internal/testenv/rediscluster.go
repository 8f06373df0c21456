package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ClusterNodeTimeout is the cluster-node-timeout of test clusters: a replica
// takes over about this long (plus an election) after its master dies.
const ClusterNodeTimeout = 1000 * time.Millisecond

// RedisNode is one redis-server process a test started on a loopback port.
type RedisNode struct {
	Addr   string
	argv   []string
	bin    string
	dir    string
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

func (n *RedisNode) start() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	cmd := exec.Command(n.bin, n.argv...)
	cmd.Dir = n.dir
	// Its own process group: an AOF rewrite is a forked child that must
	// die with it.
	// Pdeathsig: a test binary that dies (a timeout's panic) skips its
	// clean-up, and the node must not outlive it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	log, err := os.Create(filepath.Join(n.dir, "redis.log"))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return fmt.Errorf("starting redis-server %s: %w", n.Addr, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); _ = log.Close(); close(exited) }()
	n.cmd, n.exited = cmd, exited
	return nil
}

// Kill ends the node with SIGKILL, as a crash would, and waits for it.
func (n *RedisNode) Kill() {
	n.mu.Lock()
	cmd, exited := n.cmd, n.exited
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
}

// signal sends sig to the node's process group.
func (n *RedisNode) signal(sig syscall.Signal) error {
	n.mu.Lock()
	cmd := n.cmd
	n.mu.Unlock()
	if cmd == nil {
		return fmt.Errorf("redis-server %s was never started", n.Addr)
	}
	return syscall.Kill(-cmd.Process.Pid, sig)
}

// Restart starts a killed node again with its data directory: a cluster
// node rejoins as a replica of whoever took its slots.
func (n *RedisNode) Restart() error {
	n.Kill()
	return n.start()
}

// Alive reports whether the process still runs.
func (n *RedisNode) Alive() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.exited == nil {
		return false
	}
	select {
	case <-n.exited:
		return false
	default:
		return true
	}
}

// freeClusterPort returns a loopback port that is free, as is the port
// 10000 above it (a cluster node's bus). Another process could take them
// before redis-server binds; that shows as a failed start.
func freeClusterPort() (int, error) {
	for range 50 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		if port+10000 > 65535 {
			continue
		}
		bus, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000))
		if err != nil {
			continue
		}
		_ = bus.Close()
		return port, nil
	}
	return 0, errors.New("no free pair of loopback ports")
}

// testPort is freeClusterPort for a test, which fails when none is free.
func testPort(t testing.TB) int {
	t.Helper()
	p, err := freeClusterPort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// killWhenDone kills, when the test ends, every node nodes lists then
// (nil entries are nodes that never started).
func killWhenDone(t testing.TB, nodes func() []*RedisNode) {
	t.Cleanup(func() {
		for _, n := range nodes() {
			if n != nil {
				n.Kill()
			}
		}
	})
}

func newNode(bin, dir string, port int, extra ...string) (*RedisNode, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	argv := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir, "--save", ""}, extra...)
	n := &RedisNode{Addr: addr, argv: argv, bin: bin, dir: dir}
	return n, n.start()
}

// waitPing waits until addr answers PING or the deadline passes.
func waitPing(addr string, within time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(within)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server at %s did not answer within %s: %w", addr, within, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// RedisClusterEnv is a Redis Cluster of three masters and three replicas on
// loopback ports, persistent (appendonly) so a restarted node keeps its
// data, with a short ClusterNodeTimeout so failovers take about a second.
type RedisClusterEnv struct {
	Nodes []*RedisNode
	dir   string
}

// Seeds are the addresses of every node, for redis.addrs.
func (c *RedisClusterEnv) Seeds() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Addr
	}
	return out
}

// Node returns the node listening on addr, or nil.
func (c *RedisClusterEnv) Node(addr string) *RedisNode {
	for _, n := range c.Nodes {
		if n.Addr == addr {
			return n
		}
	}
	return nil
}

// Client returns a cluster client on the nodes; the caller closes it.
func (c *RedisClusterEnv) Client(poolSize int) *redis.ClusterClient {
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Seeds(), PoolSize: poolSize,
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
		// A failover moves a slot to another node: allow the client the
		// time to find the new master before it gives up on a command.
		MaxRedirects: 8,
		// As config.NewRedisClient does (config.ClusterStateReload; testenv
		// cannot import config): without it the client keeps sending to a
		// dead master for a minute after its replica took over.
		ClusterStateReloadInterval: 2 * time.Second})
}

// Stop kills every node and removes the cluster's directories.
func (c *RedisClusterEnv) Stop() {
	for _, n := range c.Nodes {
		n.Kill()
	}
	_ = os.RemoveAll(c.dir)
}

// StartRedisCluster starts three masters and three replicas with
// redis-server and joins them with redis-cli --cluster create. The caller
// stops it. It returns exec.ErrNotFound (wrapped) when redis-server or
// redis-cli is missing.
func StartRedisCluster() (*RedisClusterEnv, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server: %w", err)
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, fmt.Errorf("redis-cli: %w", err)
	}
	dir, err := os.MkdirTemp("", "ballast-rediscluster-")
	if err != nil {
		return nil, err
	}
	c := &RedisClusterEnv{dir: dir}
	ok := false
	defer func() {
		if !ok {
			c.Stop()
		}
	}()
	for i := range 6 {
		port, err := freeClusterPort()
		if err != nil {
			return nil, err
		}
		n, err := newNode(bin, filepath.Join(dir, strconv.Itoa(i)), port, "--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf", "--cluster-node-timeout", strconv.FormatInt(ClusterNodeTimeout.Milliseconds(), 10),
			// Validity factor 0: a replica takes over however long its
			// link was down; on a loaded test machine it can be slow.
			"--cluster-replica-validity-factor", "0",
			"--appendonly", "yes", "--appendfsync", "everysec")
		if err != nil {
			return nil, err
		}
		c.Nodes = append(c.Nodes, n)
	}
	for _, n := range c.Nodes {
		if err := waitPing(n.Addr, 10*time.Second); err != nil {
			return nil, err
		}
	}
	args := append([]string{"--cluster", "create"}, c.Seeds()...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("redis-cli --cluster create: %w: %s", err, out)
	}
	if err := c.WaitHealthy(30 * time.Second); err != nil {
		return nil, err
	}
	ok = true
	return c, nil
}

// WaitHealthy waits until every live node says cluster_state:ok and sees
// three masters serving all 16384 slots, each with a live replica when all
// six nodes run.
func (c *RedisClusterEnv) WaitHealthy(within time.Duration) error {
	deadline := time.Now().Add(within)
	var last error
	for time.Now().Before(deadline) {
		if last = c.healthy(); last == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("redis cluster not healthy within %s: %w", within, last)
}

func (c *RedisClusterEnv) healthy() error {
	alive := 0
	for _, n := range c.Nodes {
		if !n.Alive() {
			continue
		}
		alive++
		cl := redis.NewClient(&redis.Options{Addr: n.Addr, DialTimeout: 200 * time.Millisecond})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		info, err := cl.ClusterInfo(ctx).Result()
		cancel()
		_ = cl.Close()
		if err != nil {
			return err
		}
		if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_ok:16384") {
			return fmt.Errorf("%s: %s", n.Addr, firstLines(info, 3))
		}
	}
	masters, replicas, err := c.roles()
	if err != nil {
		return err
	}
	if len(masters) != 3 {
		return fmt.Errorf("%d masters, want 3", len(masters))
	}
	if alive == len(c.Nodes) && len(replicas) != 3 {
		return fmt.Errorf("%d connected replicas, want 3", len(replicas))
	}
	// Connected on the cluster bus is not replicating yet: a master
	// killed before its replica's first sync cannot be replaced.
	for _, r := range replicas {
		if err := replicating(r); err != nil {
			return err
		}
	}
	return nil
}

// replicationInfo reads INFO replication from the server at addr.
func replicationInfo(addr string) (string, error) {
	cl := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond})
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return cl.Info(ctx, "replication").Result()
}

// replicating checks that the replica at addr has its master link up.
func replicating(addr string) error {
	info, err := replicationInfo(addr)
	if err != nil {
		return err
	}
	if !strings.Contains(info, "master_link_status:up") {
		return fmt.Errorf("replica %s: master link not up yet", addr)
	}
	return nil
}

// roles reads CLUSTER NODES from a live node: the addresses of the masters
// that are not failed, and of the replicas that are connected.
func (c *RedisClusterEnv) roles() (masters, replicas []string, err error) {
	for _, n := range c.Nodes {
		if !n.Alive() {
			continue
		}
		cl := redis.NewClient(&redis.Options{Addr: n.Addr, DialTimeout: 200 * time.Millisecond})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		out, err := cl.ClusterNodes(ctx).Result()
		cancel()
		_ = cl.Close()
		if err != nil {
			return nil, nil, err
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Fields(line)
			if len(f) < 8 || strings.Contains(f[2], "fail") {
				continue
			}
			addr := f[1]
			if i := strings.IndexByte(addr, '@'); i >= 0 {
				addr = addr[:i]
			}
			switch {
			case strings.Contains(f[2], "master"):
				masters = append(masters, addr)
			case strings.Contains(f[2], "slave") && f[7] == "connected":
				replicas = append(replicas, addr)
			}
		}
		return masters, replicas, nil
	}
	return nil, nil, errors.New("no live node")
}

// MasterOf returns the address of the node serving key's slot now.
func (c *RedisClusterEnv) MasterOf(ctx context.Context, key string) (string, error) {
	return c.shardNode(ctx, key, "master")
}

// ReplicaOf returns the address of an online replica of key's slot's
// master.
func (c *RedisClusterEnv) ReplicaOf(ctx context.Context, key string) (string, error) {
	return c.shardNode(ctx, key, "replica")
}

// shardNode returns an online node of the given role in the shard that
// holds key's slot.
func (c *RedisClusterEnv) shardNode(ctx context.Context, key, role string) (string, error) {
	for _, n := range c.Nodes {
		if !n.Alive() {
			continue
		}
		cl := redis.NewClient(&redis.Options{Addr: n.Addr, DialTimeout: 200 * time.Millisecond})
		slot, err := cl.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			_ = cl.Close()
			continue
		}
		shards, err := cl.ClusterShards(ctx).Result()
		_ = cl.Close()
		if err != nil {
			continue
		}
		for _, sh := range shards {
			for _, r := range sh.Slots {
				if r.Start > slot || slot > r.End {
					continue
				}
				for _, nd := range sh.Nodes {
					if nd.Role == role && nd.Health == "online" {
						return net.JoinHostPort(nd.IP, strconv.FormatInt(nd.Port, 10)), nil
					}
				}
			}
		}
	}
	return "", fmt.Errorf("no %s online in the shard of %q", role, key)
}

// WaitPromoted waits until key's slot is served by a master other than
// old, and returns it.
func (c *RedisClusterEnv) WaitPromoted(key, old string, within time.Duration) (string, error) {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		m, err := c.MasterOf(ctx, key)
		cancel()
		if err == nil && m != old {
			return m, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "", fmt.Errorf("no replica took over %q's slot from %s within %s", key, old, within)
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " ")
}

var (
	sharedCluster     *RedisClusterEnv
	sharedClusterErr  error
	sharedClusterOnce sync.Once
)

// RedisCluster returns the package's test cluster, started on first use.
// The package's TestMain must call StopRedisCluster after m.Run. A test that
// kills a node restarts it and waits for WaitHealthy before it ends, so the
// next test finds three masters with a replica each. Without redis-server
// or redis-cli the test fails under CI and is skipped elsewhere.
func RedisCluster(t testing.TB) *RedisClusterEnv {
	t.Helper()
	sharedClusterOnce.Do(func() { sharedCluster, sharedClusterErr = StartRedisCluster() })
	if errors.Is(sharedClusterErr, exec.ErrNotFound) {
		Unavailable(t, "redis-server and redis-cli", sharedClusterErr)
	}
	if sharedClusterErr != nil {
		t.Fatalf("starting the test Redis Cluster: %v", sharedClusterErr)
	}
	return sharedCluster
}

// StopRedisCluster stops the package's test cluster, if one was started.
func StopRedisCluster() {
	if sharedCluster != nil {
		sharedCluster.Stop()
	}
}
