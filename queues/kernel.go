package queues

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Kernel is what a store of one concern (the packages under queues/)
// builds on: the Redis client, the namespace's keys, script runs that
// share the store's coalescing and replica wait, and the store's clock and
// retention. *Store implements it; a concern store keeps its own Lua
// scripts beside the Go that runs them and reaches Redis only through its
// Kernel, so every key still carries the namespace's hash tag.
type Kernel interface {
	Redis() redis.UniversalClient
	Namespace() Namespace
	// Run runs script coalesced with concurrent calls, as script.Run would.
	Run(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd
	// RunDurable is Run for writes acknowledged to someone outside or
	// acted on outside Redis (a claim starts a process), and for reads
	// acted on so (a gang's start): with a replica wait configured, its
	// reply comes with an error unless the replicas hold every write the
	// master made before it.
	RunDurable(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd
	// WaitsForReplicas reports whether RunDurable waits for replicas
	// (redis.wait_replicas): without, it is Run, and a read need not be
	// made again through it.
	WaitsForReplicas() bool
	Now() time.Time
	// Retention is how long ended records are kept.
	Retention() time.Duration
}

var _ Kernel = (*Store)(nil)

// Run implements Kernel.
func (s *Store) Run(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	return s.co.run(ctx, script, keys, args...)
}

// RunDurable implements Kernel.
func (s *Store) RunDurable(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	return s.co.runDurable(ctx, script, keys, args...)
}

// WaitsForReplicas implements Kernel.
func (s *Store) WaitsForReplicas() bool { return s.co.wait.replicas > 0 }

// Now implements Kernel: the store's clock (StoreOptions.Now).
func (s *Store) Now() time.Time { return s.opts.Now() }

// Retention implements Kernel.
func (s *Store) Retention() time.Duration { return s.opts.Retention }

// Wrap tags an error from Redis with the operation and, when Redis could
// not be reached or cannot serve writes, with jobs.ErrUnavailable, so a
// concern store's callers read its errors as they read the kernel's.
func Wrap(op string, err error) error { return wrap(op, err) }

// FieldTime reads a time a record field stores as Unix milliseconds, as
// every script writes times; an absent or zero field is the zero time.
// Concern stores read their own records' times with it, so a time reads
// the same whichever store wrote it.
func FieldTime(s string) time.Time { return msTime(s) }

// Pairs turns a flat HGETALL reply from a script into a map.
func Pairs(v []any) map[string]string { return pairsToMap(v) }
