package checkpoint

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/ballastdev/ballast/queues"
)

// TestLateUploadIsRefusedAndNeverRestored: the attempt moved on while its
// worker was cut off; the upload it then finishes is refused at commit and
// the next attempt restores the checkpoint committed before.
func TestLateUploadIsRefusedAndNeverRestored(t *testing.T) {
	st := openStore(t, s3Server(t, nil))
	ctx := context.Background()
	qs, j := runningJob(t)
	ledger := qs.CheckpointLedger("wA")
	dir := filepath.Join(t.TempDir(), j.ID)
	saver, _ := NewSaver(st, ledger, j.ID, j.Attempt, nil, Options{ChunkSize: 32 << 10})
	writeFile(t, dir, "state", []byte("step 1"), 0o600)
	first, err := saver.Save(ctx, dir, "1")
	if err != nil {
		t.Fatal(err)
	}
	want := tree(t, dir)
	moveOn(t, qs, j)
	writeFile(t, dir, "state", []byte("step 2"), 0o600)
	if _, err := saver.Save(ctx, dir, "2"); !errors.Is(err, queues.ErrCheckpointFenced) {
		t.Fatalf("late save: %v, want refused", err)
	}
	if got, _ := qs.Get(ctx, j.ID); got.Checkpoint != "1" {
		t.Fatalf("record's token = %q, want 1", got.Checkpoint)
	}
	target := filepath.Join(t.TempDir(), j.ID)
	r, err := RestoreLatest(ctx, st, qs.CheckpointLedger("wB"), j.ID, target, RestoreOptions{})
	if err != nil || r.Key != first.Key {
		t.Fatalf("restored %+v %v, want %s", r, err, first.Key)
	}
	sameTree(t, tree(t, target), want)
}

// TestSequenceMustGrow: a second saver of the same attempt (a worker that
// lost count) cannot commit a sequence the first one used.
func TestSequenceMustGrow(t *testing.T) {
	st := openStore(t, "file://"+t.TempDir())
	ctx := context.Background()
	qs, j := runningJob(t)
	ledger := qs.CheckpointLedger("wA")
	dir := filepath.Join(t.TempDir(), j.ID)
	writeFile(t, dir, "state", []byte("x"), 0o600)
	for i := range 2 {
		s, _ := NewSaver(st, ledger, j.ID, j.Attempt, nil, Options{})
		_, err := s.Save(ctx, dir, "t")
		if i == 0 && err != nil {
			t.Fatal(err)
		}
		if i == 1 && !errors.Is(err, queues.ErrCheckpointFenced) {
			t.Fatalf("sequence 1 again: %v, want refused", err)
		}
	}
	if keys, _ := ledger.Committed(ctx, j.ID); len(keys) != 1 {
		t.Fatalf("committed %v, want one", keys)
	}
}
