package workers

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// SelfCommand as argv[0] of a template means "this ballast binary", so demo
// and helper jobs need nothing on the PATH.
const SelfCommand = "@ballast"

// CheckpointMarker is a file a job may write in BALLAST_CHECKPOINT_DIR instead
// of printing a checkpoint line; its content is the checkpoint.
const CheckpointMarker = ".ballast-checkpoint"

// normalise turns a JSON-decoded whole float back into an integer so that 10
// is passed as "10", not "1e+01".
func normalise(v any) any {
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		return int64(f)
	}
	return v
}

// runProcess runs the job's command until it exits or r is stopped. On stop it
// sends SIGTERM to the process group, waits the grace period, then SIGKILL.
func (w *Worker) runProcess(r *running, out *output, ckDir string) outcome {
	argv := append([]string(nil), r.job.Spec.Command...)
	if argv[0] == SelfCommand {
		exe, err := os.Executable()
		if err != nil {
			return outcome{err: fmt.Errorf("resolve %s: %w", SelfCommand, err)}
		}
		argv[0] = exe
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = environment(r.job, ckDir)
	stdout, stderr := out.writer("stdout"), out.writer("stderr")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = processAttrs()
	// A grandchild that keeps the pipes open must not hold the slot forever.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return outcome{err: fmt.Errorf("start %q: %w", argv[0], err)}
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	timeout := time.NewTimer(r.job.Spec.Timeout.Std())
	defer timeout.Stop()
	var res outcome
	select {
	case err := <-waited:
		res = exitOutcome(cmd, err)
	case <-r.stopped:
		res = w.stopProcess(r, cmd, waited)
	case <-timeout.C:
		res = w.terminate(cmd, waited, r.job.Spec.Grace.Std())
		res.stop = stopTimeout
	}
	stdout.Flush()
	stderr.Flush()
	if b, err := os.ReadFile(filepath.Join(ckDir, CheckpointMarker)); err == nil {
		if c := strings.TrimSpace(string(b)); c != "" && c != r.lastCheckpoint() {
			w.recordCheckpoint(r, c)
		}
	}
	return res
}

// stopProcess ends a process the worker was asked to stop. A preemption yields
// to a process that has already exited by itself: its own outcome is the
// truth, and finishing it drops the request; requeueing a finished job would
// run it again.
func (w *Worker) stopProcess(r *running, cmd *exec.Cmd, waited chan error) outcome {
	why := r.reason()
	if why == stopPreempt {
		select {
		case err := <-waited:
			return exitOutcome(cmd, err)
		default:
		}
	}
	res := w.terminate(cmd, waited, r.job.Spec.Grace.Std())
	res.stop = why
	return res
}

// terminate asks the process group to stop, then forces it.
func (w *Worker) terminate(cmd *exec.Cmd, waited chan error, grace time.Duration) outcome {
	signalGroup(cmd.Process.Pid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-waited:
		return exitOutcome(cmd, err)
	case <-t.C:
		signalGroup(cmd.Process.Pid, syscall.SIGKILL)
		err := <-waited
		o := exitOutcome(cmd, err)
		o.killed = true
		return o
	}
}

func exitOutcome(cmd *exec.Cmd, err error) outcome {
	code := cmd.ProcessState.ExitCode()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) && !errors.Is(err, exec.ErrWaitDelay) {
		return outcome{err: err, exitCode: &code}
	}
	return outcome{exitCode: &code}
}
