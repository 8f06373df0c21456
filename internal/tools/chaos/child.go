package chaos

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// child is one ballast process of the run (a controller or a worker), in a
// process group of its own with its output in a log file.
type child struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{}
}

// startChild starts bin with args, its output going to logPath (appended,
// so a worker restarted under the same ID keeps one log).
func startChild(name, bin, logPath string, args ...string) (*child, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(f, "=== %s: %s %v\n", time.Now().UTC().Format(time.RFC3339Nano), name, args)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	// Its own group, so a Ctrl-C at the terminal reaches only the run,
	// which then ends every child itself, in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	c := &child{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(c.done)
	}()
	return c, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// kill SIGKILLs the process alone, as a crash would: what it started (job
// supervisors, each in a group of its own) must notice by itself.
func (c *child) kill() error {
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("SIGKILL %s: %w", c.name, err)
	}
	select {
	case <-c.done:
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("%s did not die within 5s of SIGKILL", c.name)
	}
}

// stop ends the process for good at the end of the run: SIGKILL to its
// group (nothing of a chaos run needs a clean stop), then waits for it.
func (c *child) stop() {
	if c.exited() {
		return
	}
	_ = syscall.Kill(-c.pid(), syscall.SIGKILL)
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
	}
}
