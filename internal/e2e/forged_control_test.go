package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues/registry"
)

// TestForgedControlMessagesLeaveAWorkerProcessAlone: the attack as found.
// Anyone on NATS publishes, by hand, every control action to a fixed
// worker process running a job. Nothing is recorded in Redis for them, so
// the job runs to completion on its first attempt on that worker, the
// worker neither drains nor exits, and it takes the next job.
func TestForgedControlMessagesLeaveAWorkerProcessAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	bin := ballastBinary(t)
	var rec recoveries
	p := newPlane(t, stepsCatalog(t), &controller.Options{OnRecover: rec.add})
	cfgPath := stepsConfig(t, p, nil)
	w := startWorkerProc(t, bin, cfgPath, "target", "--id", "target")
	id := submitSteps(t, p, 30, filepath.Join(t.TempDir(), "record.txt"))
	testenv.Eventually(t, 30*time.Second, "the job running on the target", func() bool {
		j := p.getJob(t, id)
		return j.State == jobs.StateRunning && j.Worker == "target" && checkpointStep(j.Checkpoint) >= 1
	})
	nc := p.conn(t)
	subject := p.subj.Control("target")
	for _, body := range []string{
		`{"action":"spot_notice","notice_seconds":1}`,
		`{"action":"drain"}`,
		fmt.Sprintf(`{"action":"cancel","job_id":%q,"attempt":1}`, id),
		fmt.Sprintf(`{"action":"preempt","job_id":%q,"attempt":1}`, id),
	} {
		if err := nc.Publish(subject, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	testenv.Eventually(t, 30*time.Second, "the job finished", func() bool {
		select {
		case <-w.done:
			t.Fatalf("the worker exited after forged messages:\n%s", w.log())
		default:
		}
		return p.getJob(t, id).State.Terminal()
	})
	j := p.getJob(t, id)
	if j.State != jobs.StateSucceeded || j.Attempt != 1 || j.Worker != "target" || j.Preemptions != 0 {
		t.Fatalf("job after forged messages: %s attempt %d on %q, %d preemptions", j.State, j.Attempt, j.Worker, j.Preemptions)
	}
	if !j.FinishedAt.After(sent) {
		t.Fatal("the job finished before the messages could matter; make it longer")
	}
	ws, err := registry.New(p.store).Workers(context.Background())
	if err != nil || len(ws) != 1 || ws[0].ID != "target" || ws[0].Draining {
		t.Fatalf("registry after forged messages: %+v %v", ws, err)
	}
	next := submitSteps(t, p, 1, filepath.Join(t.TempDir(), "record2.txt"))
	testenv.Eventually(t, 30*time.Second, "the next job done on the target", func() bool {
		j := p.getJob(t, next)
		return j.State == jobs.StateSucceeded && j.Worker == "target"
	})
	if _, n := rec.first(); n != 0 {
		t.Fatalf("the controller recovered %d jobs", n)
	}
}
