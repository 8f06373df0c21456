package checkpoint

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestCleanStagingRemovesOnlyTheDeads: in a checkpoint root, the staging
// directories (and swap leftovers) of a process that exited go, as do old
// ones named without a pid; those of a running process, this process's
// own, recent pid-less ones, job directories and other names stay.
func TestCleanStagingRemovesOnlyTheDeads(t *testing.T) {
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	dead := exited.Process.Pid
	if ProcessAlive(dead) {
		t.Skipf("pid %d was taken again at once", dead)
	}
	root := t.TempDir()
	now := time.Now()
	mk := func(name string, dir bool, age time.Duration) string {
		p := filepath.Join(root, name)
		var err error
		if dir {
			err = os.MkdirAll(filepath.Join(p, "sub"), 0o700)
		} else {
			err = os.WriteFile(p, nil, 0o600)
		}
		if err == nil && age > 0 {
			err = os.Chtimes(p, now.Add(-age), now.Add(-age))
		}
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	gone := []string{
		mk(stagePrefix("job-a", dead)+"123", true, 0),
		mk(stagePrefix("job-a", dead)+"123"+oldSuffix, true, 0),
		mk(".job-b.restore-456", true, LegacyStageAge+time.Hour),
	}
	stay := []string{
		mk(stagePrefix("job-c", os.Getppid())+"1", true, 0),
		mk(stagePrefix("job-d", os.Getpid())+"2", true, 0),
		mk(".job-e.restore-789", true, time.Hour),
		mk("job-a", true, 0),
		mk(stagePrefix("job-f", dead)+"3", false, 0), // a file: not ours
		mk(".job-g.restore-x1", true, LegacyStageAge+time.Hour),
		mk(fmt.Sprintf(".job-h.restore-%d-", dead), true, 0),
	}
	removed, err := CleanStaging(root, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	slices.Sort(gone)
	if !slices.Equal(removed, gone) {
		t.Errorf("removed %v\nwant %v", removed, gone)
	}
	for _, p := range gone {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s still there: %v", p, err)
		}
	}
	for _, p := range stay {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
	if removed, err := CleanStaging(filepath.Join(root, "absent"), nil, now); err != nil || removed != nil {
		t.Errorf("an absent root: %v %v", removed, err)
	}
}
