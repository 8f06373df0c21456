package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// sample fills dir with files of several sizes (across chunk borders), an
// empty file, nested and empty directories, an executable and a link.
func sample(t testing.TB, dir string, seed uint64) {
	t.Helper()
	writeFile(t, dir, "model.bin", randBytes(seed, 5*64<<10+123), 0o600)
	writeFile(t, dir, "opt/state.bin", randBytes(seed+1, 64<<10), 0o640)
	writeFile(t, dir, "opt/deep/small.json", []byte(`{"step":42}`), 0o644)
	writeFile(t, dir, "run.sh", []byte("#!/bin/sh\necho hi\n"), 0o755)
	writeFile(t, dir, "empty", nil, 0o600)
	writeFile(t, dir, ".ballast-checkpoint", []byte("step=42"), 0o600)
	if err := os.MkdirAll(filepath.Join(dir, "logs/none"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("model.bin", filepath.Join(dir, "latest")); err != nil {
		t.Fatal(err)
	}
}

// TestRoundTripToAnotherWorker: attempt 1 saves on worker A; attempt 2 on
// worker B, whose directory starts empty, restores the same bytes, modes
// and links, and the token it was committed with.
func TestRoundTripToAnotherWorker(t *testing.T) {
	backends(t, func(t *testing.T, st *Store) {
		ctx := context.Background()
		qs, j := runningJob(t)
		dirA := filepath.Join(t.TempDir(), j.ID)
		sample(t, dirA, 1)
		opts := Options{ChunkSize: 64 << 10, Concurrency: 4}
		saver, err := NewSaver(st, qs.Ledger("wA"), j.ID, j.Attempt, nil, opts)
		if err != nil {
			t.Fatal(err)
		}
		saved, err := saver.Save(ctx, dirA, "step=42")
		if err != nil {
			t.Fatal(err)
		}
		if saved.Manifest.Uploaded != saved.Manifest.Size || saved.Manifest.UploadedChunks != 6+1+1+1+1 {
			t.Fatalf("first save wrote %d bytes in %d chunks, want all %d bytes in 10",
				saved.Manifest.Uploaded, saved.Manifest.UploadedChunks, saved.Manifest.Size)
		}
		if got, _ := qs.Get(ctx, j.ID); got.Checkpoint != "step=42" {
			t.Fatalf("record's checkpoint = %q after the commit", got.Checkpoint)
		}

		j2 := moveOn(t, qs, j)
		dirB := filepath.Join(t.TempDir(), "elsewhere", j.ID)
		r, err := RestoreLatest(ctx, st, qs.Ledger("wB"), j.ID, dirB, RestoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Key != saved.Key || r.Manifest.Token != "step=42" || len(r.Fallbacks) != 0 {
			t.Fatalf("restored %s (token %q, fallbacks %v), want %s", r.Key, r.Manifest.Token, r.Fallbacks, saved.Key)
		}
		if r.Downloaded != saved.Manifest.Size || r.ReusedFiles != 0 {
			t.Fatalf("downloaded %d bytes, reused %d files; want %d bytes, none reused", r.Downloaded, r.ReusedFiles, saved.Manifest.Size)
		}
		sameTree(t, tree(t, dirB), tree(t, dirA))
		left, _ := filepath.Glob(filepath.Join(filepath.Dir(dirB), ".*"))
		if len(left) != 0 {
			t.Fatalf("staging left beside the directory: %v", left)
		}

		// Attempt 2 changes one small file: with the restored checkpoint
		// as its base it writes that file's chunk and nothing else, and
		// hashes only the files it touched.
		old := time.Now().Add(-time.Hour)
		for _, p := range []string{"model.bin", "opt/state.bin", "opt/deep/small.json", "run.sh", "empty", ".ballast-checkpoint"} {
			if err := os.Chtimes(filepath.Join(dirB, p), old, old); err != nil {
				t.Fatal(err)
			}
		}
		r.Manifest.Created = time.Now()
		for i := range r.Manifest.Entries {
			if r.Manifest.Entries[i].Kind == KindFile {
				r.Manifest.Entries[i].ModTime = old.UnixNano()
			}
		}
		writeFile(t, dirB, "opt/deep/small.json", []byte(`{"step":43}`), 0o644)
		saver2, err := NewSaver(st, qs.Ledger("wB"), j.ID, j2.Attempt, r.Manifest, opts)
		if err != nil {
			t.Fatal(err)
		}
		saved2, err := saver2.Save(ctx, dirB, "step=43")
		if err != nil {
			t.Fatal(err)
		}
		if saved2.Manifest.UploadedChunks != 1 || saved2.Manifest.Uploaded != int64(len(`{"step":43}`)) || saved2.HashedFiles != 1 {
			t.Fatalf("second save wrote %d chunks (%d bytes) and hashed %d files, want 1, 11, 1",
				saved2.Manifest.UploadedChunks, saved2.Manifest.Uploaded, saved2.HashedFiles)
		}
	})
}

// TestRestoreOnTheSameMachineDownloadsNothing: a directory that still
// holds the checkpoint's files gets them linked, not fetched; a changed
// file is fetched alone, and a stray file is gone after the restore.
func TestRestoreOnTheSameMachineDownloadsNothing(t *testing.T) {
	st := openStore(t, s3Server(t, nil))
	ctx := context.Background()
	qs, j := runningJob(t)
	dir := filepath.Join(t.TempDir(), j.ID)
	sample(t, dir, 2)
	want := tree(t, dir)
	saver, _ := NewSaver(st, qs.Ledger("wA"), j.ID, j.Attempt, nil, Options{ChunkSize: 64 << 10})
	if _, err := saver.Save(ctx, dir, "t"); err != nil {
		t.Fatal(err)
	}
	ledger := qs.Ledger("wA")
	r, err := RestoreLatest(ctx, st, ledger, j.ID, dir, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Downloaded != 0 || r.DownloadedChunks != 0 || r.ReusedFiles != 6 {
		t.Fatalf("same machine: downloaded %d bytes (%d chunks), reused %d files; want 0, 0, 6", r.Downloaded, r.DownloadedChunks, r.ReusedFiles)
	}
	sameTree(t, tree(t, dir), want)

	writeFile(t, dir, "opt/state.bin", randBytes(99, 64<<10), 0o640)
	writeFile(t, dir, "stray", []byte("not in the checkpoint"), 0o600)
	r, err = RestoreLatest(ctx, st, ledger, j.ID, dir, RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Downloaded != 64<<10 || r.DownloadedChunks != 1 || r.ReusedFiles != 5 {
		t.Fatalf("one changed file: downloaded %d bytes (%d chunks), reused %d; want 65536, 1, 5", r.Downloaded, r.DownloadedChunks, r.ReusedFiles)
	}
	sameTree(t, tree(t, dir), want)
}

// TestNoCheckpointLeavesTheDirectory: a job with no commit restores
// nothing and keeps what its directory holds.
func TestNoCheckpointLeavesTheDirectory(t *testing.T) {
	st := openStore(t, "file://"+t.TempDir())
	qs, j := runningJob(t)
	dir := filepath.Join(t.TempDir(), j.ID)
	writeFile(t, dir, "local", []byte("x"), 0o600)
	r, err := RestoreLatest(context.Background(), st, qs.Ledger("wA"), j.ID, dir, RestoreOptions{})
	if err != nil || r.Manifest != nil {
		t.Fatalf("restore with no commit: %+v %v", r, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "local")); err != nil {
		t.Fatal(err)
	}
}
