package provider

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// How much of a child's stderr is kept for its Failed error.
const (
	stderrKeepBytes = 4096
	stderrLines     = 5
)

// pipeGrace bounds how long reaping a child waits for its output pipes once
// it has exited: something it started may still hold them open.
const pipeGrace = 2 * time.Second

// child is one local worker process and its lifecycle. Its fields are
// guarded by Local.mu.
type child struct {
	inst Instance
	// cancelStart is closed to abandon a start still in its startup delay.
	cancelStart chan struct{}
	cmd         *exec.Cmd
	stderr      *tail
	// killTimer force-stops a released child that outlives ReleaseTimeout.
	killTimer *time.Timer
	// forced records that the child was SIGKILLed, for its Gone note.
	forced  bool
	endedAt time.Time
}

// start runs c's process and marks it Running. l.mu is held.
func (l *Local) start(c *child) error {
	cmd := exec.Command(l.opts.Binary, l.opts.Args(c.inst.Pool, c.inst.ID)...)
	cmd.Env = append(os.Environ(), l.opts.Env...)
	cmd.SysProcAttr = workerAttr()
	cmd.WaitDelay = pipeGrace
	c.stderr = newTail(stderrKeepBytes, stderrLines)
	cmd.Stderr = c.stderr
	if l.opts.Output != nil {
		cmd.Stdout = l.opts.Output
		cmd.Stderr = io.MultiWriter(c.stderr, l.opts.Output)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", l.opts.Binary, err)
	}
	c.cmd = cmd
	c.inst.State = Running
	c.inst.StartedAt = l.opts.Now()
	l.wg.Add(1)
	go l.watch(c)
	return nil
}

// startAfter starts c once its pool's startup delay has passed, unless it
// is released first.
func (l *Local) startAfter(c *child, delay time.Duration) {
	defer l.wg.Done()
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.cancelStart:
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.inst.State != Launching {
		return // released while the timer fired
	}
	if err := l.start(c); err != nil {
		c.inst.State, c.inst.Err, c.endedAt = Failed, err.Error(), l.opts.Now()
		l.log.Error("worker failed to start", "id", c.inst.ID, "pool", c.inst.Pool, "err", err)
		return
	}
	l.log.Info("worker started", "id", c.inst.ID, "pool", c.inst.Pool)
}

// watch reaps c's process and records how it ended: Gone when released or
// when it exited cleanly by itself, Failed otherwise, with the exit status
// and the end of its stderr.
func (l *Local) watch(c *child) {
	defer l.wg.Done()
	err := c.cmd.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.killTimer != nil {
		c.killTimer.Stop()
	}
	c.endedAt = l.opts.Now()
	// The process is gone, so its registry entry is stale whatever its last
	// heartbeat says; never block the reaper on a slow reader.
	select {
	case l.exits <- c.inst.ID:
	default:
	}
	switch {
	case c.inst.State == Releasing:
		c.inst.State = Gone
		if c.forced {
			c.inst.Err = fmt.Sprintf("force-stopped: still running %v after release", l.opts.ReleaseTimeout)
		}
		l.log.Info("worker released", "id", c.inst.ID, "pool", c.inst.Pool, "forced", c.forced)
	case err == nil:
		c.inst.State = Gone
		l.log.Info("worker exited", "id", c.inst.ID, "pool", c.inst.Pool)
	default:
		c.inst.State = Failed
		c.inst.Err = err.Error()
		if s := c.stderr.String(); s != "" {
			c.inst.Err += ": " + s
		}
		l.log.Error("worker failed", "id", c.inst.ID, "pool", c.inst.Pool, "err", c.inst.Err)
	}
}

// release starts draining c, whatever its state. l.mu is held.
func (l *Local) release(c *child) {
	switch c.inst.State {
	case Launching:
		close(c.cancelStart)
		c.inst.State, c.inst.Err, c.endedAt = Gone, "released before it started", l.opts.Now()
	case Running:
		c.inst.State = Releasing
		if err := terminate(c.cmd.Process); err != nil && !errors.Is(err, os.ErrProcessDone) {
			l.log.Warn("cannot signal worker to drain", "id", c.inst.ID, "err", err)
		}
		c.killTimer = time.AfterFunc(l.opts.ReleaseTimeout, func() { l.forceStop(c) })
	}
}

// forceStop kills a released child that did not finish draining in time.
func (l *Local) forceStop(c *child) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.inst.State != Releasing {
		return // it exited while the timer fired
	}
	// The child may have been reaped a moment ago with watch not yet
	// holding the lock; its group ID being reused in that window is the
	// remaining (negligible) risk of killing by group.
	c.forced = true
	l.log.Warn("worker did not drain in time; killing it", "id", c.inst.ID, "timeout", l.opts.ReleaseTimeout)
	if err := forceStop(c.cmd.Process); err != nil && !errors.Is(err, os.ErrProcessDone) {
		l.log.Error("cannot kill worker", "id", c.inst.ID, "err", err)
	}
}
