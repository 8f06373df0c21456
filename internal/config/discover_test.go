package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDiscoverOrder walks the discovery order from the most explicit rule
// down, removing one source at a time, so each rule is shown to win over
// every rule after it.
func TestDiscoverOrder(t *testing.T) {
	dir := t.TempDir()
	xdg := filepath.Join(dir, "xdg")
	work := filepath.Join(dir, "work")
	for _, d := range []string{filepath.Join(xdg, "ballast"), work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(work)
	envFile := filepath.Join(dir, "from-env.yaml")
	files := []string{envFile, filepath.Join(work, LocalFile), filepath.Join(xdg, "ballast", "config.yaml"), filepath.Join(xdg, "ballast", "dev.yaml")}
	for _, f := range files {
		if err := os.WriteFile(f, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{EnvConfig: envFile, "XDG_CONFIG_HOME": xdg, "HOME": filepath.Join(dir, "home")}
	getenv := func(k string) string { return env[k] }

	if got := Discover("given.yaml", getenv); got != (Found{"given.yaml", "--config"}) {
		t.Errorf("explicit: %+v", got)
	}
	steps := []struct {
		want   Found
		remove func()
	}{
		{Found{envFile, "$BALLAST_CONFIG"}, func() { delete(env, EnvConfig) }},
		{Found{LocalFile, "./ballast.yaml"}, func() { os.Remove(filepath.Join(work, LocalFile)) }},
		{Found{files[2], "user config"}, func() { os.Remove(files[2]) }},
		{Found{files[3], "ballast dev"}, func() { os.Remove(files[3]) }},
		{Found{}, nil},
	}
	for i, s := range steps {
		if got := Discover("", getenv); got != s.want {
			t.Fatalf("step %d: %+v, want %+v", i, got, s.want)
		}
		if s.remove != nil {
			s.remove()
		}
	}
}

func TestConfigDirFollowsXDG(t *testing.T) {
	for _, c := range []struct {
		xdg, home, want string
	}{
		{"/x", "/h", "/x/ballast"},
		{"", "/h", "/h/.config/ballast"},
		{"relative", "/h", "/h/.config/ballast"}, // the spec says to ignore a relative path
		{"", "", ""},
	} {
		env := map[string]string{"XDG_CONFIG_HOME": c.xdg, "HOME": c.home}
		if got := ConfigDir(func(k string) string { return env[k] }); got != c.want {
			t.Errorf("XDG_CONFIG_HOME=%q HOME=%q: %q, want %q", c.xdg, c.home, got, c.want)
		}
	}
}
