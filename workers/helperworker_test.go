package workers_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers"
)

// The test binary doubles as a worker process when these are set, so tests
// can SIGKILL a real worker without building the ballast binary.
const (
	helperNamespaceEnv = "BALLAST_TEST_HELPER_WORKER_NS"
	helperDirEnv       = "BALLAST_TEST_HELPER_WORKER_DIR"
)

// runHelperWorker runs a worker on namespace ns until SIGTERM.
func runHelperWorker(ns string) int {
	rdb := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr()})
	defer rdb.Close()
	dir := os.Getenv(helperDirEnv)
	w, err := workers.New(queues.NewStore(rdb, queues.StoreOptions{Namespace: ns}), workers.Options{
		Pool: "fixed", Slots: 2, Queues: []queues.Queue{queues.QueueCore},
		PollInterval: 5 * time.Millisecond, Heartbeat: 100 * time.Millisecond, DrainTimeout: 300 * time.Millisecond,
		LogDir: filepath.Join(dir, "log"), CheckpointDir: filepath.Join(dir, "ck"),
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	if err == nil {
		err = w.Start(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper worker:", err)
		return 1
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	<-term
	w.Stop()
	return 0
}

// startHelperWorker starts a worker process on the test's namespace; its log
// is shown if the test fails.
func (e *env) startHelperWorker() *exec.Cmd {
	e.t.Helper()
	logPath := filepath.Join(e.t.TempDir(), "worker.log")
	f, err := os.Create(logPath)
	if err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperNamespaceEnv+"="+e.ns, helperDirEnv+"="+e.t.TempDir())
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		e.t.Fatalf("starting the helper worker: %v", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(done)
	}()
	e.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if e.t.Failed() {
			b, _ := os.ReadFile(logPath)
			e.t.Logf("helper worker log:\n%s", b)
		}
	})
	return cmd
}
