package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// toLegacyLayout renames every Ballast key of ns to its name before hash
// tags, which differed only in the prefix: what an installation of the
// previous version left in Redis. It returns how many keys it renamed.
func toLegacyLayout(t *testing.T, rdb redis.UniversalClient, ns string) int {
	t.Helper()
	ctx := context.Background()
	n := queues.NewNamespace(ns)
	keys, err := rdb.Keys(ctx, n.Prefix()+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := rdb.Rename(ctx, k, n.LegacyPrefix()+strings.TrimPrefix(k, n.Prefix())).Err(); err != nil {
			t.Fatal(err)
		}
	}
	return len(keys)
}

// TestMigrateKeysThenRunExactlyOnce: jobs submitted under the old key
// layout are invisible to this version; migrate-keys refuses while a worker
// of the old layout beats, counts without moving on a dry run, moves every
// key, finds nothing on a second run, and then the jobs are read back and
// each runs exactly once.
func TestMigrateKeysThenRunExactlyOnce(t *testing.T) {
	p := newPlane(t, countCatalog(t), nil)
	ctx := context.Background()
	const total = 40
	ids := make([]string, total)
	for i := range total {
		r, err := p.sub.Submit(ctx, countSubmission(i, fmt.Sprintf("mig-%d", i)))
		if err != nil {
			t.Fatalf("submit %d: %v", i, err)
		}
		ids[i] = r.JobID
	}
	keys := toLegacyLayout(t, p.rdb, p.ns)
	if keys < total {
		t.Fatalf("renamed %d keys to the old layout, want at least one per job (%d)", keys, total)
	}
	if _, err := p.store.Get(ctx, ids[0]); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("a job under the old layout is visible before the migration: %v", err)
	}

	// An old-version worker that beat just now: refused.
	n := queues.NewNamespace(p.ns)
	now := time.Now()
	p.rdb.ZAdd(ctx, n.LegacyPrefix()+"workers", redis.Z{Score: float64(now.UnixMilli()), Member: "old-worker"})
	if _, err := queues.MigrateKeys(ctx, p.rdb, p.ns, queues.MigrateKeysOptions{}); !errors.Is(err, queues.ErrInstallRunning) {
		t.Fatalf("migration with a live worker: %v, want ErrInstallRunning", err)
	}
	// The same worker crashed long ago: its entry is data like any other.
	p.rdb.ZAdd(ctx, n.LegacyPrefix()+"workers", redis.Z{Score: float64(now.Add(-time.Hour).UnixMilli()), Member: "old-worker"})
	keys++

	dry, err := queues.MigrateKeys(ctx, p.rdb, p.ns, queues.MigrateKeysOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Total() != keys || dry.Moved["job"] < total {
		t.Fatalf("dry run would move %d keys (%v), want %d with %d or more jobs", dry.Total(), dry.Moved, keys, total)
	}
	if _, err := p.store.Get(ctx, ids[0]); !errors.Is(err, jobs.ErrNotFound) {
		t.Fatalf("the dry run moved keys: %v", err)
	}

	res, err := queues.MigrateKeys(ctx, p.rdb, p.ns, queues.MigrateKeysOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total() != keys || len(res.Conflicts) != 0 {
		t.Fatalf("moved %d keys with conflicts %v, want %d and none", res.Total(), res.Conflicts, keys)
	}
	if left, _ := p.rdb.Keys(ctx, n.LegacyPrefix()+"*").Result(); len(left) != 0 {
		t.Fatalf("old keys left after the migration: %v", left)
	}
	again, err := queues.MigrateKeys(ctx, p.rdb, p.ns, queues.MigrateKeysOptions{})
	if err != nil || again.Total() != 0 {
		t.Fatalf("second run moved %d keys (err %v), want 0", again.Total(), err)
	}
	for _, id := range ids {
		if j := p.getJob(t, id); j.State != jobs.StateQueued || j.Attempt != 1 {
			t.Fatalf("job %s after the migration: %s attempt %d, want queued attempt 1", id, j.State, j.Attempt)
		}
	}
	// Drop the stale worker entry as the controller's recovery would.
	if _, err := p.store.RecoverWorker(ctx, "old-worker"); err != nil {
		t.Fatal(err)
	}

	c := &counter{calls: map[string]int{}}
	startCountWorker(t, p, c)
	testenv.Eventually(t, 30*time.Second, "every migrated job succeeded", func() bool {
		for _, id := range ids {
			if p.getJob(t, id).State != jobs.StateSucceeded {
				return false
			}
		}
		return true
	})
	calls, runs := c.snapshot()
	for _, id := range ids {
		if calls[id] != 1 {
			t.Errorf("job %s ran %d times, want 1", id, calls[id])
		}
	}
	if runs != total {
		t.Errorf("%d runs, want %d", runs, total)
	}
}

// TestMigrateKeysKeepsConflicts: an old key whose new name holds another
// value is left in place and reported, never overwritten.
func TestMigrateKeysKeepsConflicts(t *testing.T) {
	rdb, ns := testenv.Redis(t)
	ctx := context.Background()
	n := queues.NewNamespace(ns)
	rdb.Set(ctx, n.LegacyPrefix()+"since", "1", 0)
	rdb.Set(ctx, n.Prefix()+"since", "2", 0)
	rdb.HSet(ctx, n.LegacyPrefix()+"job:a", "state", "queued")
	res, err := queues.MigrateKeys(ctx, rdb, ns, queues.MigrateKeysOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total() != 1 || len(res.Conflicts) != 1 || res.Conflicts[0] != n.LegacyPrefix()+"since" {
		t.Fatalf("moved %d, conflicts %v; want 1 moved and the since key kept", res.Total(), res.Conflicts)
	}
	if v := rdb.Get(ctx, n.Prefix()+"since").Val(); v != "2" {
		t.Errorf("the new key was overwritten: %q", v)
	}
	if v := rdb.Get(ctx, n.LegacyPrefix()+"since").Val(); v != "1" {
		t.Errorf("the old key was lost: %q", v)
	}
}
