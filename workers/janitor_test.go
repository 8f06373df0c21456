package workers

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestPruneLogsRemovesOnlyOldFiles(t *testing.T) {
	dir := t.TempDir()
	w := &Worker{opts: Options{LogDir: dir, LogRetention: time.Hour}}
	now := time.Now()
	old, fresh := filepath.Join(dir, "a.1.log"), filepath.Join(dir, "b.1.log")
	os.WriteFile(old, []byte("x"), 0o644)
	os.WriteFile(fresh, []byte("y"), 0o644)
	os.Chtimes(old, now.Add(-2*time.Hour), now.Add(-2*time.Hour))
	if n := w.pruneLogs(now); n != 1 {
		t.Fatalf("pruned %d files, want 1", n)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Error("the old log is still there")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("the fresh log was removed")
	}
}
