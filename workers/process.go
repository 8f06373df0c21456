package workers

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/ballastdev/ballast/workers/runas"
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

// killWait bounds the wait for a supervisor told to kill its job's tree; it
// takes milliseconds unless something is stuck in the kernel.
const killWait = 5 * time.Second

// runProcess runs the job's command until it exits or r is stopped. On stop it
// asks the job to stop (SIGTERM to its process group), waits the grace
// period, then kills its whole process tree.
func (w *Worker) runProcess(r *running, out *output, ckDir string, ru *runas.User) outcome {
	argv := append([]string(nil), r.job.Spec.Command...)
	if argv[0] == SelfCommand {
		exe, err := os.Executable()
		if err != nil {
			return outcome{err: fmt.Errorf("resolve %s: %w", SelfCommand, err)}
		}
		argv[0] = exe
	}
	// Resolved here, not by the supervisor, so a missing program fails the
	// start as it always did rather than as an exit code.
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return outcome{err: fmt.Errorf("start %q: %w", argv[0], err)}
	}
	cg, join, err := w.jobCgroup(r)
	if err != nil {
		return outcome{err: err}
	}
	cmd := jobCommand(path, argv, join, ru)
	cmd.Env = withHome(environmentOf(r.job, ckDir, r.gpus, w.gpuWorker(), r.gang), ru)
	if w.opts.MPS && r.share > 0 {
		// Last, so it wins over a template's own value.
		cmd.Env = append(cmd.Env, mpsEnv(r.share))
	}
	stdout, stderr := out.writer("stdout"), out.writer("stderr")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// A grandchild that keeps the pipes open must not hold the slot forever.
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Start()
	if join.fd != nil {
		_ = join.fd.Close() // the child is in the cgroup (or failed to start)
	}
	if err != nil {
		if cg != nil {
			_ = cg.Remove()
		}
		return outcome{err: fmt.Errorf("start %q: %w", argv[0], err)}
	}
	pid := cmd.Process.Pid
	r.setKill(func() {
		killTree(pid)
		if cg != nil {
			_ = cg.Kill()
		}
	})
	defer r.setKill(nil)
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
	if cg != nil {
		w.endCgroup(r, cg, cmd, &res)
	}
	stdout.Flush()
	stderr.Flush()
	if c := readMarker(filepath.Join(ckDir, CheckpointMarker), ru); c != "" && c != r.lastCheckpoint() {
		w.recordCheckpoint(r, c)
	}
	return res
}

// stopProcess ends a process the worker was asked to stop. A preemption yields
// to a process that has already exited by itself: its own outcome is the
// truth, and finishing it drops the request; requeueing a finished job would
// run it again. A lost attempt gets no grace: it already runs elsewhere, and
// a checkpoint it wrote now could not be recorded. A self-fenced one gets
// what is left before its worker's kill time (see fence.go).
func (w *Worker) stopProcess(r *running, cmd *exec.Cmd, waited chan error) outcome {
	why := r.reason()
	if why == stopPreempt || why == stopFenced {
		// A fence too: a job that ended by itself did its work, which its
		// result, recorded once Redis answers, says; requeueing it would
		// do it again. The kernel is asked as well as the goroutine that
		// waits for the process, which may not have run yet.
		select {
		case err := <-waited:
			return exitOutcome(cmd, err)
		default:
		}
		if exitedOnItsOwn(cmd.Process.Pid) {
			return exitOutcome(cmd, <-waited)
		}
	}
	var res outcome
	if why == stopLost && r.gang == nil {
		// (A gang member whose attempt another member ended gets its
		// grace: its peers were stopped, it does not run elsewhere.)
		res = kill(cmd, waited)
		if endedBeforeKill(res) {
			// The job had already exited when the kill came (its exit
			// was still on its way here): its work is done, so it is
			// settled as an end. An attempt that moved on is refused as
			// before; one whose record vanished with Redis's data has
			// its end published, so that recovery does not run it again.
			res.killed = false
			return res
		}
	} else {
		res = w.terminate(cmd, waited, r.graceFor(why))
	}
	res.stop = why
	return res
}

// terminate asks the job to stop, then kills its tree after the grace period.
func (w *Worker) terminate(cmd *exec.Cmd, waited chan error, grace time.Duration) outcome {
	askStop(cmd.Process.Pid)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-waited:
		return exitOutcome(cmd, err)
	case <-t.C:
		return kill(cmd, waited)
	}
}

// kill ends the job's whole process tree at once.
func kill(cmd *exec.Cmd, waited chan error) outcome {
	killTree(cmd.Process.Pid)
	t := time.NewTimer(killWait)
	defer t.Stop()
	var err error
	select {
	case err = <-waited:
	case <-t.C:
		killHard(cmd.Process.Pid)
		err = <-waited
	}
	o := exitOutcome(cmd, err)
	o.killed = true
	return o
}

// endedBeforeKill reports whether a process kill() was sent to had exited
// by itself first. A kill ends the job's supervisor by a signal (exit code
// -1), and a process without one is killed outright the same way; an exit
// code of 0 or more is the job's own.
func endedBeforeKill(o outcome) bool {
	return o.err == nil && o.exitCode != nil && *o.exitCode >= 0
}

func exitOutcome(cmd *exec.Cmd, err error) outcome {
	code := cmd.ProcessState.ExitCode()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) && !errors.Is(err, exec.ErrWaitDelay) {
		return outcome{err: err, exitCode: &code}
	}
	return outcome{exitCode: &code}
}
