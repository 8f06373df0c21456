package config

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/redis/go-redis/v9"
)

// The Redis topologies Ballast can run on (redis.mode).
const (
	// RedisStandalone is one Redis server at redis.addr (the default).
	RedisStandalone = "standalone"
	// RedisSentinel is a master and its replicas watched by Sentinels:
	// redis.addrs lists the Sentinels, redis.master_name the master they
	// watch; the client follows the master through a failover.
	RedisSentinel = "sentinel"
	// RedisCluster is a Redis Cluster: redis.addrs lists seed nodes, and the
	// client learns the rest and follows slot moves and failovers.
	RedisCluster = "cluster"
)

// RedisModes lists the values of redis.mode.
var RedisModes = []string{RedisStandalone, RedisSentinel, RedisCluster}

// RedisConfig is the connection to the Redis that holds job records, the
// worker registry and the asynq queues.
type RedisConfig struct {
	// Mode is the topology: standalone (default), sentinel or cluster.
	Mode string `yaml:"mode,omitempty"`
	// Addr is host:port of a standalone server.
	Addr string `yaml:"addr,omitempty"`
	// Addrs are host:port of the cluster's seed nodes (cluster) or of the
	// Sentinels (sentinel).
	Addrs []string `yaml:"addrs,omitempty"`
	// MasterName is the name the Sentinels know the master by (sentinel).
	MasterName string `yaml:"master_name,omitempty"`
	// DB is the logical database number (standalone and sentinel; a
	// cluster has only database 0).
	DB int `yaml:"db,omitempty"`
	// Username is a Redis 6 ACL user; empty means the default user.
	Username string `yaml:"username,omitempty"`
	// Password, PasswordEnv and PasswordFile are three ways to give the
	// password; at most one may be set. The env and file forms keep the
	// secret out of the config file. Every data node is reached with the
	// same credentials.
	Password     string `yaml:"password,omitempty"`
	PasswordEnv  string `yaml:"password_env,omitempty"`
	PasswordFile string `yaml:"password_file,omitempty"`
	// SentinelUsername and the SentinelPassword forms authenticate to the
	// Sentinels (mode sentinel), which often have no password, or another
	// one than the data nodes; empty means no AUTH to them.
	SentinelUsername     string `yaml:"sentinel_username,omitempty"`
	SentinelPassword     string `yaml:"sentinel_password,omitempty"`
	SentinelPasswordEnv  string `yaml:"sentinel_password_env,omitempty"`
	SentinelPasswordFile string `yaml:"sentinel_password_file,omitempty"`
	// TLS secures the connection (to the Sentinels too).
	TLS TLSConfig `yaml:"tls,omitempty"`
	// DialTimeout bounds connecting; short, so a missing Redis is reported
	// quickly instead of stalling start-up.
	DialTimeout jobs.Duration `yaml:"dial_timeout,omitempty"`
	// WaitReplicas, when above zero, makes a submission count as accepted
	// only once that many replicas hold it (Redis WAIT): a master that
	// fails right after a write cannot lose a job its submitter was told
	// is accepted. A submission not confirmed within WaitTimeout fails as
	// unavailable, and the client resubmits it under its idempotency key.
	// In mode cluster the wait is for the replicas of the master that
	// holds the namespace's slot. Workers' claims wait too, so a failover
	// cannot hand a running job to a second worker. It trades
	// availability for that: while fewer replicas than this answer (after
	// a failover, until a new replica syncs), every submission fails and
	// no job starts, so ask for fewer replicas than run.
	WaitReplicas int `yaml:"wait_replicas,omitempty"`
	// WaitTimeout bounds that wait (default 1s, at most 2s: below the
	// client's read timeout).
	WaitTimeout jobs.Duration `yaml:"wait_timeout,omitempty"`
	// RecoverOnLoss makes the leading controller rebuild, on its own, the
	// jobs Redis lost (what `ballast recover` does) as soon as a loss is
	// detected: accepted jobs missing from Redis are queued again from
	// the event stream, those that had started run again (at least once).
	// Off by default: an operator may prefer to look first, and a Redis
	// reset on purpose should be acknowledged, not refilled.
	RecoverOnLoss bool `yaml:"recover_on_loss,omitempty"`
}

// maxWaitTimeout keeps a WAIT within go-redis's default read timeout (3 s),
// which would otherwise cut the connection first.
const maxWaitTimeout = 2 * time.Second

// mode is Mode with the default filled in, so an undefaulted config
// (tests build them by hand) reads as standalone.
func (r RedisConfig) mode() string {
	if r.Mode == "" {
		return RedisStandalone
	}
	return r.Mode
}

// Endpoints are the addresses the client dials first: the server, the
// cluster's seeds or the Sentinels. Status shows them.
func (r RedisConfig) Endpoints() []string {
	if r.mode() == RedisStandalone {
		return []string{r.Addr}
	}
	return slices.Clone(r.Addrs)
}

// Topology is the mode with the defaults applied ("standalone" for an
// empty Mode).
func (r RedisConfig) Topology() string { return r.mode() }

// Options builds the go-redis options of a standalone connection, resolving
// the password and reading TLS files now. It refuses the other modes: use
// UniversalOptions, which covers all three. Errors are *jobs.FieldError
// naming the field at fault.
func (r RedisConfig) Options() (*redis.Options, error) {
	if r.mode() != RedisStandalone {
		return nil, &jobs.FieldError{Field: "redis.mode",
			Message: fmt.Sprintf("%s needs a universal client: connect with UniversalOptions", r.Mode)}
	}
	u, err := r.UniversalOptions()
	if err != nil {
		return nil, err
	}
	return u.Simple(), nil
}

// UniversalOptions builds the go-redis options of the configured topology,
// resolving the password and reading TLS files now; NewRedisClient makes
// the client. Call it on a defaulted config. Errors are *jobs.FieldError
// naming the field at fault.
func (r RedisConfig) UniversalOptions() (*redis.UniversalOptions, error) {
	mode := r.mode()
	addrs, field := r.Endpoints(), "redis.addrs"
	if mode == RedisStandalone {
		field = "redis.addr"
	}
	if len(addrs) == 0 {
		return nil, &jobs.FieldError{Field: field, Message: "list at least one host:port, for example [10.0.0.1:6379]"}
	}
	var host string
	for i, a := range addrs {
		h, _, err := net.SplitHostPort(a)
		if err != nil {
			return nil, &jobs.FieldError{Field: field, Message: "write host:port, for example 127.0.0.1:6379", Err: err}
		}
		if i == 0 {
			host = h
		}
	}
	password, err := resolveSecret("redis.password", r.Password, r.PasswordEnv, r.PasswordFile)
	if err != nil {
		return nil, err
	}
	// go-redis does not derive the TLS server name from Addr (only its URL
	// parser does), and a handshake without one fails; so pass the host.
	// In a cluster or behind Sentinels the nodes are learnt at run time, so
	// their certificates must name what tls.server_name says (or the first
	// address's host).
	tlsConf, err := r.TLS.client("redis.tls", host)
	if err != nil {
		return nil, err
	}
	o := &redis.UniversalOptions{
		Addrs:       addrs,
		DB:          r.DB,
		Username:    r.Username,
		Password:    password,
		DialTimeout: r.DialTimeout.Std(),
		TLSConfig:   tlsConf,
	}
	switch mode {
	case RedisCluster:
		o.IsClusterMode = true // one seed is enough to find the rest
	case RedisSentinel:
		o.MasterName = r.MasterName
		sp, err := resolveSecret("redis.sentinel_password", r.SentinelPassword, r.SentinelPasswordEnv, r.SentinelPasswordFile)
		if err != nil {
			return nil, err
		}
		o.SentinelUsername, o.SentinelPassword = r.SentinelUsername, sp
	}
	return o, nil
}

// NewRedisClient is the one constructor of Redis clients for every Ballast
// process: a plain client, a Sentinel-backed failover client or a cluster
// client, as redis.mode says. poolSize raises go-redis's default pool (per
// node in a cluster); 0 keeps it. asynq's server, client and inspector are
// built on the same client (asynq.New*FromRedisClient), so they follow the
// same topology.
func NewRedisClient(r RedisConfig, poolSize int) (redis.UniversalClient, error) {
	o, err := r.UniversalOptions()
	if err != nil {
		return nil, err
	}
	o.PoolSize = max(o.PoolSize, poolSize)
	if r.mode() == RedisCluster {
		co := o.Cluster()
		co.ClusterStateReloadInterval = ClusterStateReload
		return redis.NewClusterClient(co), nil
	}
	return redis.NewUniversalClient(o), nil
}

// ClusterStateReload is how often a cluster client rereads which node
// serves which slot. go-redis rereads it on a MOVED reply, but not when the
// master of a slot stops answering: after a failover it kept sending to the
// dead master until its default reload a minute later, and every command
// for that shard failed for that minute. TestSubmit500OnRedisClusterThroughFailover
// measures the difference. One CLUSTER SLOTS per process per interval.
const ClusterStateReload = 2 * time.Second

func (r RedisConfig) validate(ps *problems) {
	switch r.Mode {
	case RedisStandalone:
		if _, _, err := net.SplitHostPort(r.Addr); err != nil || r.Addr == "" {
			ps.add("redis.addr", "%q is not host:port; write it like 127.0.0.1:6379", r.Addr)
		}
		if len(r.Addrs) > 0 {
			ps.add("redis.addrs", "is for mode cluster or sentinel; a standalone server is redis.addr (or set redis.mode)")
		}
		if r.MasterName != "" {
			ps.add("redis.master_name", "is for mode sentinel; set redis.mode: sentinel or remove it")
		}
	case RedisCluster, RedisSentinel:
		r.validateAddrs(ps)
		if r.Mode == RedisSentinel && r.MasterName == "" {
			ps.add("redis.master_name", "mode sentinel needs the name the Sentinels know the master by (sentinel monitor NAME ...)")
		}
		if r.Mode == RedisCluster && r.MasterName != "" {
			ps.add("redis.master_name", "is for mode sentinel; a cluster has no master name")
		}
		if r.Mode == RedisCluster && r.DB != 0 {
			ps.add("redis.db", "a Redis Cluster has only database 0; remove redis.db")
		}
	default:
		ps.add("redis.mode", "%q is not a Redis mode; use one of %s", r.Mode, strings.Join(RedisModes, ", "))
	}
	if r.DB < 0 {
		ps.add("redis.db", "must not be negative")
	}
	checkSecret(ps, "redis.password", r.Password, r.PasswordEnv, r.PasswordFile)
	checkSecret(ps, "redis.sentinel_password", r.SentinelPassword, r.SentinelPasswordEnv, r.SentinelPasswordFile)
	if r.Mode != RedisSentinel && (r.SentinelUsername != "" || r.SentinelPassword != "" || r.SentinelPasswordEnv != "" || r.SentinelPasswordFile != "") {
		ps.add("redis.sentinel_password", "is for mode sentinel; remove the sentinel_* settings or set redis.mode: sentinel")
	}
	r.TLS.validate(ps, "redis.tls")
	positive(ps, "redis.dial_timeout", r.DialTimeout)
	if r.WaitReplicas < 0 {
		ps.add("redis.wait_replicas", "must not be negative (0: do not wait for replicas)")
	}
	if r.WaitTimeout < 0 || r.WaitTimeout.Std() > maxWaitTimeout || (r.WaitTimeout > 0 && r.WaitTimeout.Std() < time.Millisecond) {
		ps.add("redis.wait_timeout", "must be 0 (the default, 1s) or between 1ms and %s", maxWaitTimeout)
	}
	if r.WaitTimeout != 0 && r.WaitReplicas == 0 {
		ps.add("redis.wait_timeout", "has no effect without redis.wait_replicas; set both or neither")
	}
}

// validateAddrs checks redis.addrs of a cluster or Sentinel config. The
// defaults leave addr empty in these modes, so an addr next to addrs was
// written in the file: a mistake worth naming, as it would be ignored.
func (r RedisConfig) validateAddrs(ps *problems) {
	what, port := "the cluster's seed nodes", "6379"
	if r.Mode == RedisSentinel {
		what, port = "the Sentinels", "26379"
	}
	if len(r.Addrs) == 0 {
		ps.add("redis.addrs", "mode %s needs %s as host:port, for example [10.0.0.1:%s]", r.Mode, what, port)
	}
	seen := map[string]bool{}
	for i, a := range r.Addrs {
		if _, _, err := net.SplitHostPort(a); err != nil || a == "" {
			ps.add(fmt.Sprintf("redis.addrs[%d]", i), "%q is not host:port; write it like 127.0.0.1:6379", a)
		}
		if seen[a] {
			ps.add(fmt.Sprintf("redis.addrs[%d]", i), "%q is listed twice", a)
		}
		seen[a] = true
	}
	if r.Addr != "" {
		ps.add("redis.addr", "is for mode standalone; mode %s dials redis.addrs", r.Mode)
	}
}
