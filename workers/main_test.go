package workers_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: every
// worker is stopped in its test's cleanup, which must end its asynq server,
// heartbeat loop and output flushers. No goroutine needs ignoring: asynq's
// server goroutines end in Shutdown, and the go-redis clients (with their
// pools) are closed by testenv when each test ends.
//
// With helperNamespaceEnv set, the binary is a worker process instead (see
// runHelperWorker); with secretWorkerEnv, a worker holding secrets, and
// with probeEnv, the job that looks for them (see TestRunAs); with
// guardChildEnv, a service guarding its environment (TestGuardProcess);
// with restoreChildEnv, a restore to kill midway (runRestoreChild).
func TestMain(m *testing.M) {
	if ns := os.Getenv(helperNamespaceEnv); ns != "" {
		os.Exit(runHelperWorker(ns))
	}
	if ns := os.Getenv(secretWorkerEnv); ns != "" {
		os.Exit(runSecretWorker(ns))
	}
	if os.Getenv(probeEnv) != "" {
		os.Exit(runProbe())
	}
	if os.Getenv(guardChildEnv) != "" {
		os.Exit(runGuardChild())
	}
	if os.Getenv(restoreChildEnv) != "" {
		os.Exit(runRestoreChild())
	}
	goleak.VerifyTestMain(m)
}
