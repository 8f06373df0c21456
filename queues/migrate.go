package queues

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrInstallRunning is returned by MigrateKeys while a controller or a
// worker of the namespace is alive, under either key layout: renaming keys
// under a running process would hide its writes or make it write both.
var ErrInstallRunning = errors.New("the installation is running")

// MigrateQuiet is how long a worker's last heartbeat must be past before
// MigrateKeys counts the worker as stopped: a clean stop deregisters at
// once, a crashed worker stays listed with its last beat.
const MigrateQuiet = 30 * time.Second

// MigrateKeysOptions configures MigrateKeys.
type MigrateKeysOptions struct {
	// DryRun counts and lists what would move, and moves nothing.
	DryRun bool
	// Now is the clock for the liveness check; zero means time.Now.
	Now time.Time
}

// MigrateKeysResult says what MigrateKeys did (or would do, dry).
type MigrateKeysResult struct {
	// Moved counts keys renamed from the old name to the new, by family
	// (the first part after the prefix: "job", "worker", "outbox", ...).
	Moved map[string]int
	// Conflicts are old keys left in place because a different key already
	// has the new name: something wrote the new layout before the
	// migration finished. Nothing was lost; the operator decides.
	Conflicts []string
}

// Total is the number of keys moved.
func (r MigrateKeysResult) Total() int {
	n := 0
	for _, v := range r.Moved {
		n += v
	}
	return n
}

// MigrateKeys moves every key of namespace ns from the layout before hash
// tags ("NS:job:ID") to the tagged one ("{NS}:job:ID"), for an installation
// whose controllers and workers are all stopped: it refuses with
// ErrInstallRunning while a controller lease or a recently beating worker
// exists under either layout. asynq's keys are not touched: their names do
// not depend on the layout.
//
// Each key moves in one step that cannot leave it under both names or
// neither: RENAMENX on a single server; on a cluster, where the two names
// are in different slots, RESTORE under the new name, then DEL of the old,
// and a key found under both names with the same value is a move a crash
// interrupted, finished by deleting the old. So a run can stop anywhere
// and be run again; a finished migration finds nothing to move.
func MigrateKeys(ctx context.Context, c redis.UniversalClient, ns string, opts MigrateKeysOptions) (MigrateKeysResult, error) {
	const op = "queues.MigrateKeys"
	n := NewNamespace(ns)
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	if err := checkStopped(ctx, c, n, now); err != nil {
		return MigrateKeysResult{}, err
	}
	legacy := n.LegacyPrefix()
	_, cluster := c.(*redis.ClusterClient)
	res := MigrateKeysResult{Moved: map[string]int{}}
	var mu sync.Mutex
	err := ScanKeys(ctx, c, legacy+"*", func(batch []string) error {
		var moved, conflicts []string
		var err error
		switch {
		case opts.DryRun:
			moved = batch
		case cluster:
			moved, conflicts, err = restoreKeys(ctx, c, n, batch)
		default:
			moved, conflicts, err = renameKeys(ctx, c, n, batch)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, k := range moved {
			res.Moved[family(strings.TrimPrefix(k, legacy))]++
		}
		res.Conflicts = append(res.Conflicts, conflicts...)
		return err
	})
	sort.Strings(res.Conflicts)
	if err != nil {
		return res, wrap(op, err)
	}
	return res, nil
}

// newName is the tagged name of an old key of n.
func newName(n Namespace, old string) string {
	return n.Prefix() + strings.TrimPrefix(old, n.LegacyPrefix())
}

// family is the first part of a key name after its prefix.
func family(rest string) string {
	if i := strings.IndexByte(rest, ':'); i >= 0 {
		return rest[:i]
	}
	return rest
}

// checkStopped refuses while anything of the namespace is alive under
// either layout.
func checkStopped(ctx context.Context, c redis.UniversalClient, n Namespace, now time.Time) error {
	cutoff := now.Add(-MigrateQuiet).UnixMilli()
	for _, prefix := range []string{n.LegacyPrefix(), n.Prefix()} {
		leader, err := c.Get(ctx, prefix+"leader").Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return wrap("queues.MigrateKeys", err)
		}
		if leader != "" {
			return fmt.Errorf("%w: controller %q holds the lease (%sleader); stop every controller and worker first", ErrInstallRunning, leader, prefix)
		}
		live, err := c.ZRangeByScore(ctx, prefix+"workers", &redis.ZRangeBy{Min: fmt.Sprint(cutoff), Max: "+inf"}).Result()
		if err != nil {
			return wrap("queues.MigrateKeys", err)
		}
		if len(live) > 0 {
			return fmt.Errorf("%w: worker(s) %s beat less than %s ago; stop them (or wait %s after a crash) and run again",
				ErrInstallRunning, strings.Join(live, ", "), MigrateQuiet, MigrateQuiet)
		}
	}
	return nil
}

// renameKeys moves keys with RENAMENX: atomic, so a key is under one name
// at any moment. A key gone since the scan is skipped.
func renameKeys(ctx context.Context, c redis.UniversalClient, n Namespace, keys []string) (moved, conflicts []string, err error) {
	cmds := make([]*redis.BoolCmd, len(keys))
	_, err = c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.RenameNX(ctx, k, newName(n, k))
		}
		return nil
	})
	for i, cmd := range cmds {
		ok, cerr := cmd.Result()
		switch {
		case cerr == nil && ok:
			moved = append(moved, keys[i])
		case cerr == nil:
			conflicts = append(conflicts, keys[i])
		case strings.Contains(cerr.Error(), "no such key"):
		default:
			return moved, conflicts, cerr
		}
	}
	if err != nil && !strings.Contains(err.Error(), "no such key") {
		return moved, conflicts, err
	}
	return moved, conflicts, nil
}

// restoreKeys moves keys across slots: DUMP and PTTL of the old name,
// RESTORE under the new (refused when the new name exists), DEL of the
// old. A new name already holding the same value is an interrupted move of
// this key: the old is deleted.
func restoreKeys(ctx context.Context, c redis.UniversalClient, n Namespace, keys []string) (moved, conflicts []string, err error) {
	for _, k := range keys {
		dump, err := c.Dump(ctx, k).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return moved, conflicts, err
		}
		ttl, err := c.PTTL(ctx, k).Result()
		if err != nil {
			return moved, conflicts, err
		}
		if ttl == -2 { // expired since the DUMP
			continue
		}
		if ttl < 0 {
			ttl = 0
		}
		to := newName(n, k)
		if err := c.Restore(ctx, to, ttl, dump).Err(); err != nil {
			if !strings.Contains(err.Error(), "BUSYKEY") {
				return moved, conflicts, err
			}
			there, derr := c.Dump(ctx, to).Result()
			if derr != nil || there != dump {
				conflicts = append(conflicts, k)
				continue
			}
		}
		if err := c.Del(ctx, k).Err(); err != nil {
			return moved, conflicts, err
		}
		moved = append(moved, k)
	}
	return moved, conflicts, nil
}
