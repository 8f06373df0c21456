package checkpoint

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/ballastdev/ballast/queues/checkpoints"
)

// TestLateUploadIsRefusedAndNeverRestored: the attempt moved on while its
// worker was cut off; the upload it then finishes is refused at commit and
// the next attempt restores the checkpoint committed before.
func TestLateUploadIsRefusedAndNeverRestored(t *testing.T) {
	st := openStore(t, s3Server(t, nil))
	ctx := context.Background()
	qs, j := runningJob(t)
	ledger := qs.Ledger("wA")
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
	if _, err := saver.Save(ctx, dir, "2"); !errors.Is(err, checkpoints.ErrFenced) {
		t.Fatalf("late save: %v, want refused", err)
	}
	if got, _ := qs.Get(ctx, j.ID); got.Checkpoint != "1" {
		t.Fatalf("record's token = %q, want 1", got.Checkpoint)
	}
	target := filepath.Join(t.TempDir(), j.ID)
	r, err := RestoreLatest(ctx, st, qs.Ledger("wB"), j.ID, target, RestoreOptions{})
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
	ledger := qs.Ledger("wA")
	dir := filepath.Join(t.TempDir(), j.ID)
	writeFile(t, dir, "state", []byte("x"), 0o600)
	for i := range 2 {
		s, _ := NewSaver(st, ledger, j.ID, j.Attempt, nil, Options{})
		_, err := s.Save(ctx, dir, "t")
		if i == 0 && err != nil {
			t.Fatal(err)
		}
		if i == 1 && !errors.Is(err, checkpoints.ErrFenced) {
			t.Fatalf("sequence 1 again: %v, want refused", err)
		}
	}
	if keys, _ := ledger.Committed(ctx, j.ID); len(keys) != 1 {
		t.Fatalf("committed %v, want one", keys)
	}
}

// TestLateUploadInFlightIsRefused: attempt 1's worker is cut off with an
// upload written up to its manifest; meanwhile the job moves on and
// attempt 2 commits a checkpoint of its own. When the old worker comes
// back its commit is refused, and restores (before and after a
// collection) give attempt 2's files.
func TestLateUploadInFlightIsRefused(t *testing.T) {
	backends(t, func(t *testing.T, st *Store) {
		ctx := context.Background()
		qs, j := runningJob(t)
		dirA := filepath.Join(t.TempDir(), "A", j.ID)
		saverA, _ := NewSaver(st, qs.Ledger("wA"), j.ID, j.Attempt, nil, Options{ChunkSize: 16 << 10})
		writeFile(t, dirA, "state", randBytes(1, 40<<10), 0o600)
		if _, err := saverA.Save(ctx, dirA, "1"); err != nil {
			t.Fatal(err)
		}
		writeFile(t, dirA, "state", randBytes(2, 40<<10), 0o600)
		cutOff, back := make(chan struct{}), make(chan struct{})
		saverA.beforeCommit = func(context.Context) {
			close(cutOff)
			<-back
		}
		late := make(chan error, 1)
		go func() {
			_, err := saverA.Save(ctx, dirA, "late")
			late <- err
		}()
		<-cutOff

		j2 := moveOn(t, qs, j)
		dirB := filepath.Join(t.TempDir(), "B", j.ID)
		r, err := RestoreLatest(ctx, st, qs.Ledger("wB"), j.ID, dirB, RestoreOptions{})
		if err != nil || r.Manifest.Token != "1" {
			t.Fatalf("attempt 2's restore: %+v %v, want token 1", r, err)
		}
		writeFile(t, dirB, "state", randBytes(3, 40<<10), 0o600)
		saverB, _ := NewSaver(st, qs.Ledger("wB"), j.ID, j2.Attempt, r.Manifest, Options{ChunkSize: 16 << 10})
		second, err := saverB.Save(ctx, dirB, "2")
		if err != nil {
			t.Fatal(err)
		}
		want := tree(t, dirB)

		close(back)
		if err := <-late; !errors.Is(err, checkpoints.ErrFenced) {
			t.Fatalf("late commit: %v, want refused", err)
		}
		committed, _ := qs.Ledger("wB").Committed(ctx, j.ID)
		if len(committed) != 2 || committed[0] != second.Key {
			t.Fatalf("committed %v, want %s first and attempt 1's first checkpoint", committed, second.Key)
		}
		if got, _ := qs.Get(ctx, j.ID); got.Checkpoint != "2" {
			t.Fatalf("record's token %q, want 2", got.Checkpoint)
		}
		if n := count(objects(t, st, "jobs/"+j.ID+"/manifests/"), "/manifests/"); n != 3 {
			t.Fatalf("%d manifests in the store, want 3 (the late one written, not committed)", n)
		}
		for _, collect := range []bool{false, true} {
			if collect {
				c, err := Collect(ctx, st, qs.Ledger("wB"), j.ID, 0, time.Now().Add(time.Minute))
				if err != nil || c.Manifests != 1 {
					t.Fatalf("collect: %+v %v, want the late manifest deleted", c, err)
				}
			}
			target := filepath.Join(t.TempDir(), j.ID)
			r, err := RestoreLatest(ctx, st, qs.Ledger("wC"), j.ID, target, RestoreOptions{})
			if err != nil || r.Key != second.Key || len(r.Fallbacks) != 0 {
				t.Fatalf("restore (collected: %v): %+v %v, want %s", collect, r, err, second.Key)
			}
			sameTree(t, tree(t, target), want)
		}
	})
}
