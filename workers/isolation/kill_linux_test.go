//go:build linux

package isolation

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// On a real v1 machine (root, the freezer mounted), Kill ends every process
// in the job's cgroup, a grandchild that left the job's session included.
func TestV1KillEndsTheWholeTree(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create cgroups")
	}
	for _, c := range []string{ctlFreezer, ctlMemory, ctlCPU} {
		if !exists(filepath.Join(DefaultRoot, c, "cgroup.procs")) {
			t.Skipf("needs the cgroup v1 %s hierarchy", c)
		}
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	m, err := Open(Options{Mode: V1, WorkerID: "isotest-" + hex.EncodeToString(b), QoS: jobs.QoS{Groups: map[string]jobs.Limits{"g": {CPUs: 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	j, err := m.Job("g", "k:1", nil)
	if err != nil || j == nil {
		t.Fatalf("Job = %v, %v", j, err)
	}
	procs, _ := j.Join()
	// The shell joins the job's cgroups as the supervisor does, then
	// starts a grandchild in a session of its own.
	cmd := exec.Command("sh", append([]string{"-c", `for f in "$@"; do echo $$ > "$f"; done; setsid sleep 300 & sleep 300`, "sh"}, procs...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(m.d.pids(j.rel)) < 3*len(nested) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := len(readPIDs(filepath.Join(DefaultRoot, ctlFreezer, parentName, j.rel, "cgroup.procs"))); n < 3 {
		t.Fatalf("%d processes in the job's cgroup, want the shell, its child and the setsid grandchild", n)
	}
	if err := j.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for len(m.d.pids(j.rel)) > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if pids := m.d.pids(j.rel); len(pids) > 0 {
		t.Fatalf("processes left after Kill: %v", pids)
	}
	if err := j.Remove(); err != nil {
		t.Fatal(err)
	}
}
