package cli

import (
	"os"
	"testing"
)

// TestMain keeps the tests away from the user's own configuration: config
// discovery would otherwise find ~/.config/ballast (or a ballast dev
// running on this machine) and talk to it.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ballast-cli-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	os.Unsetenv("BALLAST_CONFIG")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
