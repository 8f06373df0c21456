package checkpoint

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/checkpoints"
)

// TestLostCommitReplyDropsTheBase: a commit lands but its reply is lost,
// so the saver cannot know whether its base is still committed. With keep
// 1 it is not, and a later save that named the base's chunks (a file set
// back to the base's content) would name chunks a collection deleted in
// between: the newest checkpoint must restore.
func TestLostCommitReplyDropsTheBase(t *testing.T) {
	st := openStore(t, s3Server(t, nil))
	ctx := context.Background()
	qs, j, ns := runningJobIn(t)
	proxy := testenv.NewLossyProxy(t, testenv.RedisAddr())
	// No retries: the lost reply is the saver's to handle.
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr(), MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	ledger := checkpoints.New(queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})).Ledger("wA")
	dir := filepath.Join(t.TempDir(), j.ID)
	saver, _ := NewSaver(st, ledger, j.ID, j.Attempt, nil, Options{ChunkSize: 16 << 10, Keep: 1})

	x := randBytes(1, 40<<10)
	writeFile(t, dir, "state", x, 0o600)
	if _, err := saver.Save(ctx, dir, "1"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "state", randBytes(2, 40<<10), 0o600)
	proxy.LoseNextReply([]byte(":checkpoints"))
	if _, err := saver.Save(ctx, dir, "2"); err == nil {
		t.Fatal("a save whose commit reply was lost succeeded")
	}
	if proxy.Lost() != 1 {
		t.Fatalf("the proxy lost %d replies, want 1", proxy.Lost())
	}
	if rec, _ := qs.Get(ctx, j.ID); rec.Checkpoint != "2" {
		t.Fatalf("record's token %q: the commit should have landed", rec.Checkpoint)
	}

	// A collection a grace later: checkpoint 1 fell out of the ledger,
	// and its chunks go.
	collect := func() {
		t.Helper()
		if _, err := Collect(ctx, st, ledger, j.ID, 0, time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	collect()

	writeFile(t, dir, "state", x, 0o600)
	saved, err := saver.Save(ctx, dir, "3")
	if err != nil {
		t.Fatal(err)
	}
	want := tree(t, dir)
	collect()
	target := filepath.Join(t.TempDir(), j.ID)
	r, err := RestoreLatest(ctx, st, ledger, j.ID, target, RestoreOptions{})
	if err != nil || r.Key != saved.Key || len(r.Fallbacks) != 0 {
		t.Fatalf("restore after the collection: %+v %v, want %s", r, err, saved.Key)
	}
	sameTree(t, tree(t, target), want)
}
