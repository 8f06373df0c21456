//go:build linux

package workers

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ballastdev/ballast/workers/runas"
)

func TestParseSupervisorUser(t *testing.T) {
	a, err := parseSupervisorArgs([]string{"--ppid", "42", "--cgroup", "/a/cgroup.procs", "--user", "65534:65534:65534,100", "--path", "/bin/sh", "--", "sh"})
	if err != nil || a.user == nil || a.user.Uid != 65534 || a.user.Gid != 65534 || len(a.user.Groups) != 2 || a.user.Groups[1] != 100 || len(a.cgroups) != 1 {
		t.Fatalf("parseSupervisorArgs with --user = %+v, %v", a, err)
	}
	for _, bad := range []string{"0:65534:", "65534:0:", "65534:65534:0", "65534:65534", "x:1:", "1:1:a"} {
		if _, err := parseSupervisorArgs([]string{"--ppid", "42", "--user", bad, "--path", "/bin/sh", "--", "sh"}); err == nil {
			t.Errorf("--user %q accepted", bad)
		}
	}
	if got := formatCredential(7, 8, []uint32{8, 9}); got != "7:8:8,9" {
		t.Errorf("formatCredential = %q", got)
	}
}

func TestRunAsRefusedWithoutRoot(t *testing.T) {
	_, err := resolveJobUsers(Options{RunAs: "nobody"}, 1000)
	if err == nil || !strings.Contains(err.Error(), "only root") || !strings.Contains(err.Error(), "UID 1000") {
		t.Errorf("resolveJobUsers as UID 1000 = %v, want a refusal naming root", err)
	}
	_, err = resolveJobUsers(Options{TemplateRunAs: map[string]string{"train": "no-such-user-ballast"}}, 0)
	if err == nil || !strings.Contains(err.Error(), "templates.train.run_as") {
		t.Errorf("resolveJobUsers of a missing user = %v, want the template's field named", err)
	}
	if u, err := resolveJobUsers(Options{}, 1000); err != nil || u.def != nil {
		t.Errorf("no run_as: %+v, %v", u, err)
	}
}

// TestReadMarkerRefusesWhatTheJobDoesNotOwn: the worker reads the marker
// as root, so a job must not get a root-only file read for it.
func TestReadMarkerRefusesWhatTheJobDoesNotOwn(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("root-only"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	self := &runas.User{UID: uint32(os.Getuid())}
	other := &runas.User{UID: uint32(os.Getuid()) + 1}
	for _, c := range []struct {
		name, path string
		ru         *runas.User
		want       string
	}{
		{"own file", secret, self, "root-only"},
		{"no run_as", secret, nil, "root-only"},
		{"another user's file", secret, other, ""},
		{"a symbolic link", link, self, ""},
		{"a FIFO", fifo, self, ""},
		{"none", filepath.Join(dir, "none"), self, ""},
	} {
		if got := readMarker(c.path, c.ru); got != c.want {
			t.Errorf("%s: readMarker = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestSupervisorDropsTheJob starts a job through the supervisor as
// nobody: the job has nobody's IDs and groups only, no_new_privs, no
// capabilities, and cannot read the parent's environment or memory.
func TestSupervisorDropsTheJob(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("dropping a job to another user needs root; run the tests as root (CI does)")
	}
	ru, err := runas.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	pid := strconv.Itoa(os.Getpid())
	script := `id -u; id -G; grep -E '^(NoNewPrivs|CapEff|CapPrm)' /proc/self/status; ` +
		`cat /proc/` + pid + `/environ >/dev/null 2>&1 || echo environ-denied; ` +
		`head -c1 /proc/` + pid + `/mem >/dev/null 2>&1 || echo mem-denied`
	cmd := jobCommand("/bin/sh", []string{"sh", "-c", script}, cgroupJoin{}, &ru)
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v: %s", err, out.String())
	}
	groups := make([]string, len(ru.Groups))
	for i, g := range ru.Groups {
		groups[i] = strconv.Itoa(int(g))
	}
	want := strconv.Itoa(int(ru.UID)) + "\n" + strings.Join(groups, " ") + "\n" +
		"CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nNoNewPrivs:\t1\nenviron-denied\nmem-denied\n"
	if got := out.String(); got != want {
		t.Errorf("the job as nobody printed:\n%s\nwant:\n%s", got, want)
	}
}
