package workers_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers"
)

// handlerSpec is a job run by the in-process handler called name.
func handlerSpec(name string) jobs.Spec {
	return jobs.Spec{Handler: name, Params: map[string]any{"size": "large"}, Class: jobs.ClassBurst, Rhythm: jobs.RhythmPulse,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}
}

func TestHandlers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	type seen struct {
		run    workers.Run
		ckDir  bool
		ckErr  error
		notSet error
	}
	seenCh := make(chan seen, 1)
	o := e.options()
	o.Handlers = map[string]workers.Handler{
		"ok": func(ctx context.Context, r *workers.Run) error {
			fmt.Fprintf(r.Output, "hello from %s attempt %d\n", r.JobID, r.Attempt)
			_, statErr := os.Stat(r.CheckpointDir)
			s := seen{run: *r, ckDir: statErr == nil, ckErr: r.Checkpoint("h-ck-1")}
			s.notSet = (&workers.Run{}).Checkpoint("x")
			seenCh <- s
			return nil
		},
		"boom": func(ctx context.Context, r *workers.Run) error { return errors.New("boom: disk full") },
		"panics": func(ctx context.Context, r *workers.Run) error {
			panic("out of cheese")
		},
		"slow": func(ctx context.Context, r *workers.Run) error {
			<-ctx.Done()
			return ctx.Err()
		},
	}
	e.start(o)

	t.Run("success", func(t *testing.T) {
		j := e.submit(handlerSpec("ok"), queues.QueueLoan)
		got := e.waitTerminal(j.ID, wait)
		if got.State != jobs.StateSucceeded || got.ExitCode == nil || *got.ExitCode != 0 {
			t.Fatalf("state %s exit %s error %q, want succeeded", got.State, code(got), got.LastError)
		}
		if got.Checkpoint != "h-ck-1" {
			t.Errorf("checkpoint %q, want h-ck-1", got.Checkpoint)
		}
		s := <-seenCh
		if s.run.JobID != j.ID || s.run.Attempt != 1 || s.run.ResumeFrom != "" || s.run.Params["size"] != "large" {
			t.Errorf("the handler saw %+v", s.run)
		}
		// Handlers get the path but not the directory: most never use it.
		if s.ckDir || !strings.HasSuffix(s.run.CheckpointDir, j.ID) {
			t.Errorf("checkpoint dir %q: created=%v, want the job's path, not created", s.run.CheckpointDir, s.ckDir)
		}
		if s.ckErr != nil {
			t.Errorf("Run.Checkpoint: %v", s.ckErr)
		}
		if s.notSet == nil {
			t.Errorf("Run.Checkpoint outside a worker did not fail")
		}
		want := fmt.Sprintf("hello from %s attempt 1", j.ID)
		if !hasLine(e.logs(j.ID), "stdout", want) {
			t.Errorf("handler output %q missing from the log %+v", want, e.logs(j.ID))
		}
	})
	t.Run("error", func(t *testing.T) {
		j := e.submit(handlerSpec("boom"), queues.QueueCore)
		got := e.waitTerminal(j.ID, wait)
		if got.State != jobs.StateFailed || !strings.Contains(got.LastError, "boom: disk full") {
			t.Fatalf("state %s error %q, want failed with the handler's error", got.State, got.LastError)
		}
		if got.ExitCode == nil || *got.ExitCode == 0 {
			t.Errorf("exit code %s, want non-zero", code(got))
		}
	})
	t.Run("panic", func(t *testing.T) {
		j := e.submit(handlerSpec("panics"), queues.QueueCore)
		got := e.waitTerminal(j.ID, wait)
		if got.State != jobs.StateFailed || !strings.Contains(got.LastError, "out of cheese") {
			t.Fatalf("state %s error %q, want failed naming the panic", got.State, got.LastError)
		}
	})
	t.Run("unknown", func(t *testing.T) {
		j := e.submit(handlerSpec("no-such-handler"), queues.QueueCore)
		got := e.waitTerminal(j.ID, wait)
		if got.State != jobs.StateFailed || !strings.Contains(got.LastError, `"no-such-handler"`) {
			t.Fatalf("state %s error %q, want failed naming the handler", got.State, got.LastError)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		spec := handlerSpec("slow")
		spec.Timeout = jobs.Duration(200 * time.Millisecond)
		j := e.submit(spec, queues.QueueCore)
		got := e.waitTerminal(j.ID, wait)
		if got.State != jobs.StateFailed || got.LastError != "timed out" {
			t.Fatalf("state %s error %q, want failed and timed out", got.State, got.LastError)
		}
		if d := got.FinishedAt.Sub(got.StartedAt); d < 200*time.Millisecond || d > 3*time.Second {
			t.Errorf("the handler ran %s, want about its 200ms timeout", d)
		}
	})
}

func TestHandlerCancelAndDrain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := e.options()
	started := make(chan string, 4)
	o.Handlers = map[string]workers.Handler{
		"wait": func(ctx context.Context, r *workers.Run) error {
			if r.Attempt > 1 {
				if r.ResumeFrom != "at-stop" {
					return fmt.Errorf("resumed from %q", r.ResumeFrom)
				}
				return nil
			}
			started <- r.JobID
			<-ctx.Done()
			_ = r.Checkpoint("at-stop")
			return ctx.Err()
		},
	}
	w := e.start(o)

	cancelled := e.submit(handlerSpec("wait"), queues.QueueCore)
	if id := <-started; id != cancelled.ID {
		t.Fatalf("started %s, want %s", id, cancelled.ID)
	}
	if res, err := e.store.Cancel(context.Background(), cancelled.ID); err != nil || res != queues.CancelRequested {
		t.Fatalf("Cancel = %q, %v", res, err)
	}
	got := e.waitFor(cancelled.ID, 2*time.Second, "the cancel to stop the handler", func(j jobs.Job) bool { return j.State.Terminal() })
	if got.State != jobs.StateCancelled {
		t.Fatalf("state %s error %q, want cancelled", got.State, got.LastError)
	}

	drained := e.submit(handlerSpec("wait"), queues.QueueCore)
	if id := <-started; id != drained.ID {
		t.Fatalf("started %s, want %s", id, drained.ID)
	}
	w.Stop()
	got = e.get(drained.ID)
	if got.State != jobs.StateQueued || got.Attempt != 2 || got.Checkpoint != "at-stop" {
		t.Fatalf("after the drain: state %s attempt %d checkpoint %q, want queued attempt 2 from at-stop",
			got.State, got.Attempt, got.Checkpoint)
	}
	e.start(o) // a second worker: o.ID is empty, so it gets its own name
	got = e.waitTerminal(drained.ID, wait)
	if got.State != jobs.StateSucceeded || got.Attempt != 2 {
		t.Fatalf("state %s attempt %d error %q, want attempt 2 to succeed", got.State, got.Attempt, got.LastError)
	}
}
