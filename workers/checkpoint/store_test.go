package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFileStoreOnAnotherFilesystem: a file store on another filesystem
// than the temporary directory (a shared mount) saves and restores.
func TestFileStoreOnAnotherFilesystem(t *testing.T) {
	dir := t.TempDir()
	var a, b syscall.Stat_t
	if syscall.Stat(dir, &a) != nil || syscall.Stat("/dev/shm", &b) != nil || a.Dev == b.Dev {
		t.Skip("needs /dev/shm on another filesystem than the test's directories")
	}
	tmp, err := os.MkdirTemp("/dev/shm", "ckpt-tmp-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp)
	if err := os.Mkdir(filepath.Join(dir, "store"), 0o700); err != nil {
		t.Fatal(err)
	}
	st := openStore(t, "file://"+filepath.Join(dir, "store"))
	ctx := context.Background()
	qs, j := runningJob(t)
	src := filepath.Join(dir, "src", j.ID)
	writeFile(t, src, "state", randBytes(1, 100<<10), 0o600)
	saver, _ := NewSaver(st, qs.Ledger("wA"), j.ID, j.Attempt, nil, Options{ChunkSize: 32 << 10})
	if _, err := saver.Save(ctx, src, "1"); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "dst", j.ID)
	if _, err := RestoreLatest(ctx, st, qs.Ledger("wA"), j.ID, target, RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	sameTree(t, tree(t, target), tree(t, src))
}
