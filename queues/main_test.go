package queues_test

import (
	"os"
	"testing"

	"github.com/ballastdev/ballast/internal/testenv"
)

// TestMain stops the package's Redis Cluster (started by the first test
// that asks for one) once every test has run.
func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopRedisCluster()
	os.Exit(code)
}
