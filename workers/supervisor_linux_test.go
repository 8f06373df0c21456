//go:build linux

package workers

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

func TestParseSupervisorArgs(t *testing.T) {
	a, err := parseSupervisorArgs([]string{"--ppid", "42", "--path", "/bin/sh", "--", "sh", "-c", "true"})
	if err != nil || a.ppid != 42 || a.path != "/bin/sh" || len(a.argv) != 3 || a.argv[0] != "sh" {
		t.Fatalf("parseSupervisorArgs = %+v, %v", a, err)
	}
	a, err = parseSupervisorArgs([]string{"--ppid", "42", "--cgroup", "/a/cgroup.procs", "--cgroup", "/b/cgroup.procs", "--path", "/bin/sh", "--", "sh"})
	if err != nil || !slices.Equal(a.cgroups, []string{"/a/cgroup.procs", "/b/cgroup.procs"}) || a.path != "/bin/sh" || len(a.argv) != 1 {
		t.Fatalf("parseSupervisorArgs with cgroups = %+v, %v", a, err)
	}
	for _, bad := range [][]string{
		nil,
		{"--ppid", "42", "--cgroup", "--path", "/bin/sh", "--", "sh"}, // --cgroup without a file
		{"--ppid", "42", "--path", "/bin/sh", "--"},                   // no argv
		{"--ppid", "x", "--path", "/bin/sh", "--", "sh"},              // not a PID
		{"--ppid", "0", "--path", "/bin/sh", "--", "sh"},              // not a PID
		{"--path", "/bin/sh", "--ppid", "1", "--", "sh"},              // out of order
		{"--ppid", "42", "--path", "/bin/sh", "sh", "-c"},             // no "--"
	} {
		if _, err := parseSupervisorArgs(bad); err == nil {
			t.Errorf("parseSupervisorArgs(%q) accepted", bad)
		}
	}
}

// procStat must find the parent even when the command name holds spaces
// and parentheses, which a job chooses freely: "x) Z 1 (y" would make a
// naive parser read state Z and parent 1.
func TestProcStatTrickyName(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "x) Z 1 (y")
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	ppid, state, ok := procStat(cmd.Process.Pid)
	if !ok || ppid != os.Getpid() || state == 'Z' {
		t.Fatalf("procStat = %d %q %v, want parent %d, alive", ppid, state, ok, os.Getpid())
	}
	if live := liveDescendants(os.Getpid()); !slices.Contains(live, cmd.Process.Pid) {
		t.Errorf("liveDescendants = %v, want it to hold %d", live, cmd.Process.Pid)
	}
}

func TestProcStatOfThisProcess(t *testing.T) {
	ppid, state, ok := procStat(os.Getpid())
	if !ok || ppid != os.Getppid() || state == 'Z' {
		t.Fatalf("procStat(self) = %d %q %v, want parent %d", ppid, state, ok, os.Getppid())
	}
	if _, _, ok := procStat(-1); ok {
		t.Error("procStat of no process succeeded")
	}
}
