package gangs_test

import (
	"os"
	"testing"

	"github.com/ballastdev/ballast/internal/testenv"
)

// TestMain stops the package's Redis Cluster, should a test start one,
// once every test has run.
func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopRedisCluster()
	os.Exit(code)
}
