//go:build linux

package workers

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A job's supervisor is born in its v2 cgroup (clone3 with
// CLONE_INTO_CGROUP), so the job never runs a moment outside it. The
// unified hierarchy takes processes even with no controller enabled, which
// lets this run on a machine whose controllers are bound to v1.
func TestJobCommandStartsInsideItsV2Cgroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create cgroups")
	}
	root := "/sys/fs/cgroup"
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err != nil {
		root = filepath.Join(root, "unified")
	}
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err != nil {
		t.Skipf("no cgroup v2 hierarchy mounted: %v", err)
	}
	dir := filepath.Join(root, "ballast-jointest-"+randomHex(4))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(dir) })
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := jobCommand("/bin/sh", []string{"sh", "-c", "cat /proc/self/cgroup"}, cgroupJoin{fd: f}, nil)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v: %s", err, out.String())
	}
	want := "0::/" + filepath.Base(dir)
	if !strings.Contains(out.String(), want+"\n") {
		t.Errorf("/proc/self/cgroup of the job:\n%s\nwant the line %q", out.String(), want)
	}
}
