//go:build linux

package workers_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ballastdev/ballast/workers"
	"github.com/ballastdev/ballast/workers/runas"
)

// The test binary is TestGuardProcess's service process when
// guardChildEnv is set: it drops the secret variable, guards itself if
// told, and waits.
const (
	guardChildEnv  = "BALLAST_TEST_GUARD_CHILD"
	guardSecretEnv = "RUNAS_TEST_SECRET"
)

func runGuardChild() int {
	// What a service might do once it has read its secret: it changes
	// what os.Getenv sees, not what the kernel shows in /proc.
	_ = os.Unsetenv(guardSecretEnv)
	if os.Getenv(guardChildEnv) == "guard" {
		if err := workers.GuardProcess(); err != nil {
			fmt.Println("guard:", err)
			return 1
		}
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin) // until the test closes it
	return 0
}

// TestGuardProcess shows what an unprivileged process, a job run as the
// service's own user, can read of the service's environment: everything
// it started with, os.Unsetenv notwithstanding, until the service guards
// itself; then nothing. Root still reads it.
func TestGuardProcess(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the test runs a service and a job as nobody, which needs root; run the tests as root (CI does)")
	}
	nobody, err := runas.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	cred := &syscall.Credential{Uid: nobody.UID, Gid: nobody.GID, Groups: []uint32{}}
	base, err := os.MkdirTemp("", "ballast-guard-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "service")
	copyExecutable(t, bin)
	for _, mode := range []string{"plain", "guard"} {
		t.Run(mode, func(t *testing.T) {
			secret := newSecret()
			svc := exec.Command(bin)
			svc.Dir = "/"
			svc.Env = []string{guardChildEnv + "=" + mode, guardSecretEnv + "=" + secret}
			svc.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
			stdin, err := svc.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := svc.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = stdin.Close(); _ = svc.Wait() })
			if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
				t.Fatalf("the service said %q", line)
			}
			environ := "/proc/" + strconv.Itoa(svc.Process.Pid) + "/environ"
			job := exec.Command("cat", environ)
			job.Dir = "/"
			job.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
			out, jobErr := job.CombinedOutput()
			leaked := strings.Contains(string(out), secret)
			t.Logf("%s: a job of the service's user reading %s: leaked=%v, %v %q", mode, environ, leaked, jobErr, firstLine(out))
			switch mode {
			case "plain":
				if !leaked {
					t.Errorf("unguarded, the job did not read the unset variable (%v: %s); the guarded case proves nothing", jobErr, out)
				}
			case "guard":
				if leaked || jobErr == nil {
					t.Errorf("guarded, the job read %s: %v %q", environ, jobErr, out)
				}
			}
			root, err := os.ReadFile(environ)
			if err != nil || !strings.Contains(string(root), secret) {
				t.Errorf("root reading %s: %v; root reads any process's environment, guarded or not", environ, err)
			}
		})
	}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return s
}
