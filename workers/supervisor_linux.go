//go:build linux

package workers

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// SupervisorCommand, as the first argument, makes any binary that links this
// package a job supervisor instead of what its main would do:
//
//	BINARY job-supervisor --ppid WORKER_PID [--cgroup PROCS_FILE]... [--user UID:GID:GROUPS] --path PROGRAM -- ARGV...
//
// A worker runs each job under one, re-executing its own binary, so that the
// job's whole process tree ends with its attempt. The kernel's parent-death
// signal reaches only a direct child, and a job's grandchildren (a
// backgrounded process, a daemon that double-forked, anything that left the
// process group) would outlive a SIGKILLed worker and run beside the next
// attempt elsewhere. The supervisor is a child subreaper: every orphan of
// the job's tree is reparented to it, so it can find and kill them all
// without cgroups.
//
// It is hooked into init, not into ballast's command table, because the
// worker also runs inside other programs (tests, benchmarks, library users)
// whose main knows nothing of it; re-executing /proc/self/exe reaches this
// package in all of them.
const SupervisorCommand = "job-supervisor"

// How the worker talks to a supervisor: SIGTERM is forwarded to the job's
// process group (the checkpoint request); supervisorKill makes it kill
// every descendant and die. supervisorKill is also its parent-death signal,
// so a worker's death, however sudden, has the same effect. SIGHUP is free
// for this: the supervisor has no terminal.
const supervisorKill = syscall.SIGHUP

func init() {
	if len(os.Args) > 1 && os.Args[1] == SupervisorCommand {
		// syscall.Exit, not os.Exit: in a binary built with -race (the
		// tests) os.Exit sleeps a second for the race detector, which
		// would hold every job's end and the worker's slot that long.
		// Nothing is buffered that os.Exit would flush.
		syscall.Exit(supervise(os.Args[2:]))
	}
}

// supervisorArgs are the arguments after SupervisorCommand.
type supervisorArgs struct {
	ppid int
	// cgroups are cgroup.procs files (cgroup v1) the supervisor moves
	// itself into before it starts the job, so the job is born inside its
	// cgroups and never runs a moment unlimited.
	cgroups []string
	// user, when set, is who the job runs as (run_as): the supervisor
	// stays root, so it can join the cgroups and later kill whatever
	// the job started, and only the job takes these IDs, at its exec,
	// for good: setuid as root changes real, effective and saved IDs
	// and clears every capability, and no_new_privs bars regaining
	// them by exec. A job of another user cannot read the worker's or
	// the supervisor's environment or memory in /proc: both are root's
	// processes, and the kernel's ptrace check refuses it.
	user *syscall.Credential
	path string
	argv []string
}

func parseSupervisorArgs(args []string) (supervisorArgs, error) {
	var a supervisorArgs
	usage := fmt.Errorf("usage: %s --ppid PID [--cgroup PROCS_FILE]... [--user UID:GID:GROUPS] --path PROGRAM -- ARGV0 [ARG]", SupervisorCommand)
	if len(args) < 2 || args[0] != "--ppid" {
		return a, usage
	}
	ppid, err := strconv.Atoi(args[1])
	if err != nil || ppid <= 0 {
		return a, fmt.Errorf("--ppid %q is not a process ID", args[1])
	}
	a.ppid = ppid
	rest := args[2:]
	for len(rest) >= 2 && rest[0] == "--cgroup" {
		a.cgroups = append(a.cgroups, rest[1])
		rest = rest[2:]
	}
	if len(rest) >= 2 && rest[0] == "--user" {
		if a.user, err = parseCredential(rest[1]); err != nil {
			return a, err
		}
		rest = rest[2:]
	}
	if len(rest) < 4 || rest[0] != "--path" || rest[2] != "--" {
		return a, usage
	}
	a.path, a.argv = rest[1], rest[3:]
	return a, nil
}

// joinCgroups moves the supervisor into its job's v1 cgroups. It runs
// before the job starts, so the job and everything it forks inherit them.
func joinCgroups(files []string) error {
	pid := strconv.Itoa(os.Getpid())
	for _, f := range files {
		if err := os.WriteFile(f, []byte(pid), 0); err != nil {
			return err
		}
	}
	return nil
}

// supervise runs one job and returns the exit code to leave with. The job's
// stdin, stdout and stderr are the supervisor's own, handed down as they are,
// so the worker reads the job's output exactly as if it had started it; the
// job's exit status is passed up the same way (see exitLike).
func supervise(args []string) int {
	a, err := parseSupervisorArgs(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ballast:", err)
		return 2
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, supervisorKill, syscall.SIGCHLD)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "ballast: cannot become a child subreaper:", err)
		return 126
	}
	// The worker may have died before the parent-death signal was armed.
	if os.Getppid() != a.ppid {
		return 128 + int(syscall.SIGKILL)
	}
	if err := joinCgroups(a.cgroups); err != nil {
		// The worker set the limits and reported them in force; running
		// the job outside them would make that report a lie.
		fmt.Fprintln(os.Stderr, "ballast: cannot enter the job's cgroup:", err)
		return 125
	}
	if a.user != nil {
		if err := forbidNewPrivileges(); err != nil {
			// Without it a set-user-ID program could give the job
			// back what run_as took away.
			fmt.Fprintln(os.Stderr, "ballast: cannot set no_new_privs for the job:", err)
			return 126
		}
	}
	// A nil Env hands the job this process's environment, which the worker
	// built for the job: nothing of the worker's own is in it.
	job, err := os.StartProcess(a.path, a.argv, &os.ProcAttr{
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		// Its own process group, so SIGTERM reaches the job and its
		// children as it did before the supervisor; the parent-death
		// signal covers a supervisor that is itself killed outright.
		// The kernel clears that signal when IDs change, but Go sets it
		// after the Credential switch, so it holds for a run_as job too.
		Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: a.user},
	})
	if err != nil {
		// The worker resolved the program, so this is rare (a bad
		// interpreter line, a binary for another machine); 127 is what a
		// shell would say.
		fmt.Fprintf(os.Stderr, "ballast: start %q: %v\n", a.argv[0], err)
		return 127
	}
	pgid := job.Pid
	// The parent-death signal is tied to the thread that forked; checking
	// the parent now and then covers what that misses. Real time: the
	// supervisor is its own process, without the worker's clock.
	orphan := time.NewTicker(500 * time.Millisecond)
	defer orphan.Stop()
	for {
		select {
		case sig := <-sigs:
			switch sig {
			case syscall.SIGTERM, syscall.SIGINT:
				_ = syscall.Kill(-pgid, syscall.SIGTERM)
			case supervisorKill:
				// A job that ended before the kill was handled (its
				// SIGCHLD still queued behind it) did its work: its own
				// status is passed up, so the worker settles it as an end
				// rather than as a stop after which it would run again.
				if ws, done := reapChildren(job.Pid); done {
					killDescendants(pgid)
					return exitLike(ws)
				}
				killDescendants(pgid)
				return exitLike(syscall.WaitStatus(syscall.SIGKILL))
			case syscall.SIGCHLD:
				if ws, done := reapChildren(job.Pid); done {
					// The job is over; whatever it left behind is too.
					killDescendants(pgid)
					return exitLike(ws)
				}
			}
		case <-orphan.C:
			if os.Getppid() != a.ppid {
				killDescendants(pgid)
				return exitLike(syscall.WaitStatus(syscall.SIGKILL))
			}
		}
	}
}

// reapChildren reaps every child that has ended (orphans of the job's tree
// included) and reports the job's status once it is among them.
func reapChildren(jobPid int) (syscall.WaitStatus, bool) {
	var jobStatus syscall.WaitStatus
	done := false
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return jobStatus, done
		}
		if pid == jobPid {
			jobStatus, done = ws, true
		}
	}
}

// exitLike ends the supervisor the way the job ended, so the worker sees
// the same exit code it saw before supervisors: the job's own code, or
// "killed by a signal" (exit code -1). Termination signals are re-raised
// as they are; any other signal is reported as SIGKILL, because the Go
// runtime answers a raised SIGSEGV or SIGQUIT with a stack dump of its own
// on the job's stderr, and the worker only tells exits from signals apart.
func exitLike(ws syscall.WaitStatus) int {
	if ws.Exited() {
		return ws.ExitStatus()
	}
	sig := syscall.SIGKILL
	if s := ws.Signal(); s == syscall.SIGTERM || s == syscall.SIGINT || s == syscall.SIGHUP {
		sig = s
	}
	signal.Reset(sig)
	_ = syscall.Kill(os.Getpid(), sig)
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL) // if the first did not take
	return 128 + int(sig)
}
