package checkpoint

import (
	"os"
	"testing"
)

// TestMain lets the crash trials run this test binary as the uploading
// process they kill (see crashChild); otherwise it runs the tests.
func TestMain(m *testing.M) {
	if plan := os.Getenv(crashChildEnv); plan != "" {
		os.Exit(crashChild(plan))
	}
	os.Exit(m.Run())
}
