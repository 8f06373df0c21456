package workers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/checkpoints"
	"github.com/ballastdev/ballast/workers/checkpoint"
)

// restoreChildEnv makes the test binary a process that restores one
// checkpoint (runRestoreChild), for the test to kill mid-restore.
const restoreChildEnv = "BALLAST_RESTORE_CHILD"

// restorePlan is what the restoring child restores, and where.
type restorePlan struct {
	Store  string `json:"store"`
	Job    string `json:"job"`
	Key    string `json:"key"`
	Target string `json:"target"`
}

// runRestoreChild restores the plan's checkpoint; the test's store never
// answers its chunk reads, so it waits in its staging directory until it
// is killed.
func runRestoreChild() int {
	var p restorePlan
	if err := json.Unmarshal([]byte(os.Getenv(restoreChildEnv)), &p); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx := context.Background()
	st, err := checkpoint.Open(ctx, p.Store)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	_, err = checkpoint.Restore(ctx, st, p.Job, []string{p.Key}, p.Target, checkpoint.RestoreOptions{})
	fmt.Fprintln(os.Stderr, "restore returned:", err)
	return 1
}

// TestWorkerStartRemovesStagingOfACrashedRestore: a process killed while
// it restores a checkpoint leaves its staging directory in the checkpoint
// root; a worker starting on that root removes it, and keeps the staging
// directory of a process still running and the job directories.
func TestWorkerStartRemovesStagingOfACrashedRestore(t *testing.T) {
	e := newEnv(t)
	release := make(chan struct{})
	storeURL := testenv.S3(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			blocked := false
			select {
			case <-release:
			default:
				blocked = r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/chunks/")
			}
			if blocked {
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
			}
			h.ServeHTTP(w, r)
		})
	})
	// Before the server's own cleanup, which waits for blocked requests.
	t.Cleanup(func() { close(release) })
	st := openStore(t, storeURL)

	ctx := context.Background()
	j := e.submit(jobs.Spec{Command: []string{"true"}, Class: jobs.ClassCore, Rhythm: jobs.RhythmPeriodic,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}, queues.QueueCore)
	if _, ok, err := e.store.Claim(ctx, queues.Delivery{JobID: j.ID, Attempt: 1}, "w0"); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	saver, err := checkpoint.NewSaver(st, checkpoints.New(e.store).Ledger("w0"), j.ID, 1, nil, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "model.bin"), make([]byte, 100000), 0o600); err != nil {
		t.Fatal(err)
	}
	saved, err := saver.Save(ctx, src, "step-1")
	if err != nil {
		t.Fatal(err)
	}

	o := e.options()
	o.CheckpointStore = st
	root := o.CheckpointDir
	kept := []string{filepath.Join(root, "other-job"), filepath.Join(root, fmt.Sprintf(".running-job.restore-%d-7", os.Getppid()))}
	for _, d := range kept {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "f"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	plan, _ := json.Marshal(restorePlan{Store: storeURL, Job: j.ID, Key: saved.Key, Target: filepath.Join(root, j.ID)})
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), restoreChildEnv+"="+string(plan))
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	stagePrefix := "." + j.ID + ".restore-" + strconv.Itoa(child.Process.Pid) + "-"
	var stage string
	testenv.Eventually(t, 10*time.Second, "the child's staging directory", func() bool {
		entries, _ := os.ReadDir(root)
		for _, en := range entries {
			if strings.HasPrefix(en.Name(), stagePrefix) {
				stage = filepath.Join(root, en.Name())
				return true
			}
		}
		return false
	})
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	if _, err := os.Stat(stage); err != nil {
		t.Fatalf("the killed restore left no staging directory: %v", err)
	}

	e.start(o)
	if _, err := os.Stat(stage); !os.IsNotExist(err) {
		t.Errorf("the crashed restore's staging directory %s is still there after the worker started (%v)", stage, err)
	}
	for _, d := range kept {
		if _, err := os.Stat(filepath.Join(d, "f")); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}
