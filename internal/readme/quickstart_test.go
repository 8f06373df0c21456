package readme

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// devPorts are added to the README's `ballast dev` line so that the test
// does not compete for the default ports with a dev instance someone is
// running on the same machine; nothing else about the commands changes.
const devPorts = " --nats-port -1 --http 127.0.0.1:0"

// block returns the command lines of the fenced block after the README
// comment that starts with marker, comments and blank lines left out.
func block(t *testing.T, readme, marker string) []string {
	t.Helper()
	i := strings.Index(readme, "<!-- "+marker)
	if i < 0 {
		t.Fatalf("README has no %q marker", marker)
	}
	rest := readme[i:]
	start := strings.Index(rest, "```sh\n")
	if start < 0 {
		t.Fatalf("no ```sh block after %q", marker)
	}
	rest = rest[start+len("```sh\n"):]
	end := strings.Index(rest, "```")
	var cmds []string
	sc := bufio.NewScanner(strings.NewReader(rest[:end]))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			cmds = append(cmds, l)
		}
	}
	if len(cmds) == 0 {
		t.Fatalf("empty block after %q", marker)
	}
	return cmds
}

// freshCopy copies the repository at root to dir, leaving out what a
// clone would not have: the git directory and build outputs.
func freshCopy(t *testing.T, root, dir string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		switch rel {
		case ".git", "bin", ".cache", "ballast":
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, _ := d.Info()
		return os.WriteFile(target, b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("copying the repository: %v", err)
	}
}

// TestReadmeQuickStart runs the README's quick start as written: terminal
// 1's commands (the build, then ballast dev in the background), then each
// of terminal 2's, which must succeed with no export or flag, finding the
// dev instance by themselves.
func TestReadmeQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs ballast dev")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	term1, term2 := block(t, readme, "quickstart:terminal-1"), block(t, readme, "quickstart:terminal-2")
	if len(term1) != 2 || !strings.HasPrefix(term1[1], "bin/ballast dev") {
		t.Fatalf("terminal 1 should be the build and bin/ballast dev, is %q", term1)
	}

	// The copy is fresh each run, but in the same place for one checkout:
	// Go's build cache keys the module's own packages by their directory,
	// so the second run's build reuses the first's instead of compiling
	// the whole module again (about 50 s on a busy 2-core machine).
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(os.TempDir(), "ballast-readme-"+hex.EncodeToString(sum[:6]))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	freshCopy(t, root, dir)
	xdg := t.TempDir()
	env := append(os.Environ(), "XDG_CONFIG_HOME="+xdg, "BALLAST_CONFIG=", "NO_COLOR=1")
	sh := func(ctx context.Context, line string) *exec.Cmd {
		c := exec.CommandContext(ctx, "sh", "-c", line)
		c.Dir, c.Env = dir, env
		return c
	}

	start := time.Now()
	if out, err := sh(context.Background(), term1[0]).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", term1[0], err, out)
	}
	t.Logf("%s: %s", term1[0], time.Since(start).Round(time.Millisecond))

	logPath := filepath.Join(t.TempDir(), "dev.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	dev := sh(context.Background(), "exec "+term1[1]+devPorts)
	dev.Stdout, dev.Stderr = logFile, logFile
	dev.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its elastic workers too, at cleanup
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- dev.Wait() }()
	devLog := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = dev.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			t.Errorf("ballast dev did not stop within 15 s of SIGTERM")
		}
		_ = syscall.Kill(-dev.Process.Pid, syscall.SIGKILL) // whatever of its group is left
		logFile.Close()
	}
	t.Cleanup(stop)

	devFile := filepath.Join(xdg, "ballast", "dev.yaml")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(devFile); err == nil {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("ballast dev exited before it was ready: %v\n%s", err, devLog())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("ballast dev wrote no %s within 30 s\n%s", devFile, devLog())
		}
	}
	t.Logf("ballast dev ready after %s", time.Since(start).Round(time.Millisecond))

	// What a reader is told to expect from some of the commands: the job's
	// own output in `submit --wait`, runs apart from deliveries in `jobs`.
	shows := map[string]string{
		"bin/ballast submit hello name=you --wait": "  | hello you\n",
		"bin/ballast jobs":                         "RUNS",
	}
	for line := range shows {
		if !strings.Contains("\n"+strings.Join(term2, "\n")+"\n", "\n"+line+"\n") {
			t.Errorf("terminal 2 no longer runs %q: update this test's expectations with the README", line)
		}
	}
	for _, line := range term2 {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		began := time.Now()
		out, err := sh(ctx, line).CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%s: %v\n%s\n--- ballast dev:\n%s", line, err, out, devLog())
		}
		if want, ok := shows[line]; ok && !strings.Contains(string(out), want) {
			t.Errorf("%s: output has no %q:\n%s", line, want, out)
		}
		if strings.Contains(string(out), "using built-in defaults") {
			t.Errorf("%s did not find the dev instance:\n%s", line, out)
		}
		t.Logf("%s: %s", line, time.Since(began).Round(time.Millisecond))
	}
	stop()
	if _, err := os.Stat(devFile); !os.IsNotExist(err) {
		t.Errorf("ballast dev left %s behind after it stopped (%v)", devFile, err)
	}
	t.Logf("quick start in %s", time.Since(start).Round(time.Millisecond))
}
