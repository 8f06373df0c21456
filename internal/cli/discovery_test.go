package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/internal/config"
)

// configWithTemplate writes a config whose one template, named name, tells
// which file a command read.
func configWithTemplate(t *testing.T, path, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	body := "pools:\n  fixed: {kind: fixed, slots: 1}\ntemplates:\n  " + name + ":\n    command: [\"true\"]\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestConfigDiscoveryOrderInCommands runs a command with every source of
// config present, then removes them from the most explicit down: each in
// turn decides what the command reads, and the last, none at all, gives
// the built-in defaults with one notice naming the Redis.
func TestConfigDiscoveryOrderInCommands(t *testing.T) {
	dir := t.TempDir()
	xdg := filepath.Join(dir, "xdg")
	t.Setenv("XDG_CONFIG_HOME", xdg)
	work := filepath.Join(dir, "work")
	explicit, fromEnv := filepath.Join(dir, "explicit.yaml"), filepath.Join(dir, "env.yaml")
	configWithTemplate(t, explicit, "from-flag")
	configWithTemplate(t, fromEnv, "from-env")
	configWithTemplate(t, filepath.Join(work, "ballast.yaml"), "from-cwd")
	configWithTemplate(t, filepath.Join(xdg, "ballast", "config.yaml"), "from-user")
	configWithTemplate(t, filepath.Join(xdg, "ballast", "dev.yaml"), "from-dev")
	t.Chdir(work)
	t.Setenv("BALLAST_CONFIG", fromEnv)

	read := func() (string, string) {
		t.Helper()
		code, out, errOut := run(t, "templates")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		return out, errOut
	}
	if out := runOK(t, "templates", "--config", explicit); !strings.Contains(out, "from-flag") {
		t.Fatalf("--config not read:\n%s", out)
	}
	for _, s := range []struct {
		want   string
		remove func()
	}{
		{"from-env", func() { os.Unsetenv("BALLAST_CONFIG") }},
		{"from-cwd", func() { os.Remove(filepath.Join(work, "ballast.yaml")) }},
		{"from-user", func() { os.Remove(filepath.Join(xdg, "ballast", "config.yaml")) }},
		{"from-dev", func() { os.Remove(filepath.Join(xdg, "ballast", "dev.yaml")) }},
	} {
		out, errOut := read()
		if !strings.Contains(out, s.want) || strings.Contains(errOut, "built-in defaults") {
			t.Fatalf("want %s read, no notice:\nstdout:\n%s\nstderr:\n%s", s.want, out, errOut)
		}
		s.remove()
	}
	out, errOut := read()
	if !strings.Contains(out, "steps") { // the built-in dev templates
		t.Errorf("defaults not used:\n%s", out)
	}
	if strings.Count(errOut, "using built-in defaults") != 1 || !strings.Contains(errOut, "Redis 127.0.0.1:6379") {
		t.Errorf("want one notice naming the Redis, got:\n%s", errOut)
	}
	// A named file that is not there is an error, never the defaults.
	if code, _, errOut := run(t, "templates", "--config", filepath.Join(dir, "missing.yaml")); code != 1 || strings.Contains(errOut, "built-in defaults") {
		t.Errorf("a missing --config: exit %d %q", code, errOut)
	}
}

// TestDevConfigIsPublishedAndWithdrawn: what dev writes, discovery finds,
// and a stop removes it unless another instance wrote over it.
func TestDevConfigIsPublishedAndWithdrawn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ballast", "dev.yaml")
	unpublish, err := publishDevConfig(path, config.Dev())
	if err != nil {
		t.Fatal(err)
	}
	if out := runOK(t, "templates", "--config", path); !strings.Contains(out, "hello") {
		t.Fatalf("published config not readable:\n%s", out)
	}
	unpublish()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("dev file left after stop: %v", err)
	}
	unpublish, _ = publishDevConfig(path, config.Dev())
	os.WriteFile(path, []byte("# another instance\n"), 0o600)
	unpublish()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("a stop removed another instance's file: %v", err)
	}
}
