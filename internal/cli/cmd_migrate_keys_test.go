package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/queues"
)

// TestMigrateKeysCommand: --dry-run counts by kind and moves nothing; the
// real run moves; a second finds nothing; a live worker of the old layout
// makes it refuse with what to do.
func TestMigrateKeysCommand(t *testing.T) {
	f := newFlowEnv(t, unreachableNATS)
	ctx := context.Background()
	rdb := f.store.Redis()
	n := queues.NewNamespace(f.ns)
	rdb.HSet(ctx, n.LegacyPrefix()+"job:a", "state", "queued")
	rdb.HSet(ctx, n.LegacyPrefix()+"job:b", "state", "queued")
	rdb.ZAdd(ctx, n.LegacyPrefix()+"jobs", redis.Z{Score: 1, Member: "a"})

	out := runOK(t, "migrate-keys", "--config", f.path, "--dry-run")
	if !strings.Contains(out, "would move 3 keys") || !strings.Contains(out, "job          2") {
		t.Errorf("dry run output:\n%s", out)
	}
	if rdb.Exists(ctx, n.Job("a")).Val() != 0 {
		t.Fatal("the dry run moved a key")
	}
	out = runOK(t, "migrate-keys", "--config", f.path)
	if !strings.Contains(out, "moved 3 keys from "+f.ns+":* to {"+f.ns+"}:*") {
		t.Errorf("migration output:\n%s", out)
	}
	if rdb.HGet(ctx, n.Job("a"), "state").Val() != "queued" {
		t.Error("job a is not under its new name")
	}
	if out := runOK(t, "migrate-keys", "--config", f.path); !strings.Contains(out, "nothing to move") {
		t.Errorf("second run output:\n%s", out)
	}

	rdb.ZAdd(ctx, n.LegacyPrefix()+"workers", redis.Z{Score: float64(time.Now().UnixMilli()), Member: "w-old"})
	code, _, errOut := run(t, "migrate-keys", "--config", f.path)
	if code == 0 || !strings.Contains(errOut, "w-old") || !strings.Contains(errOut, "stop them") {
		t.Errorf("with a live worker: code %d, stderr %s", code, errOut)
	}
}
