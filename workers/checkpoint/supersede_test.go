package checkpoint

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// TestNewerSaveSupersedes: a checkpoint reported while the previous one
// still uploads cancels it; only the newer one is committed.
func TestNewerSaveSupersedes(t *testing.T) {
	st := openStore(t, s3Server(t, nil))
	ctx := context.Background()
	qs, j := runningJob(t)
	ledger := qs.Ledger("wA")
	dir := filepath.Join(t.TempDir(), j.ID)
	saver, _ := NewSaver(st, ledger, j.ID, j.Attempt, nil, Options{ChunkSize: 16 << 10})
	writeFile(t, dir, "state", randBytes(1, 64<<10), 0o600)
	entered := make(chan struct{})
	var calls atomic.Int32
	saver.beforeManifest = func(ctx context.Context) {
		if calls.Add(1) == 1 {
			close(entered)
			<-ctx.Done() // the first save stalls until superseded
		}
	}
	first := make(chan error, 1)
	go func() {
		_, err := saver.Save(ctx, dir, "old")
		first <- err
	}()
	<-entered
	writeFile(t, dir, "state", randBytes(2, 64<<10), 0o600)
	saved, err := saver.Save(ctx, dir, "new")
	if err != nil {
		t.Fatal(err)
	}
	if err := <-first; !errors.Is(err, ErrSuperseded) {
		t.Fatalf("first save: %v, want ErrSuperseded", err)
	}
	keys, _ := ledger.Committed(ctx, j.ID)
	if len(keys) != 1 || keys[0] != saved.Key || saved.Manifest.Seq != 2 {
		t.Fatalf("committed %v (seq %d), want only %s with seq 2", keys, saved.Manifest.Seq, saved.Key)
	}
	if got, _ := qs.Get(ctx, j.ID); got.Checkpoint != "new" {
		t.Fatalf("record's token %q, want new", got.Checkpoint)
	}
}
