package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// maxScriptOutput caps a script's stdout; a few thousand instances of JSON
// fit comfortably, and a runaway script cannot exhaust memory.
const maxScriptOutput = 4 << 20

// scriptResult is what one script call produced.
type scriptResult struct {
	stdout []byte
	// stderr is the end of the script's stderr, one line.
	stderr string
	// code is the exit code, or -1 when the script did not exit normally.
	code int
	// timedOut reports that the call's timeout killed it.
	timedOut bool
}

// describe says how the script ended, for error messages.
func (r scriptResult) describe(timeout time.Duration) string {
	var s string
	switch {
	case r.timedOut:
		s = fmt.Sprintf("timed out after %v", timeout)
	case r.code >= 0:
		s = fmt.Sprintf("exit code %d", r.code)
	default:
		s = "killed"
	}
	if r.stderr != "" {
		s += ": stderr: " + r.stderr
	}
	return s
}

// capped is a bytes.Buffer that drops what goes past its limit while still
// reporting success, so the script is not broken by a write error.
type capped struct {
	bytes.Buffer
	limit     int
	truncated bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.limit - c.Len(); len(p) > room {
		c.truncated = true
		c.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// run calls the script argv with args added, bounded by e.opts.Timeout. The
// timeout kills the script's whole process group. A non-zero exit is not
// an error here; only failing to run the script, or ctx ending, is.
func (e *Exec) run(ctx context.Context, argv []string, args ...string) (scriptResult, error) {
	tctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, argv[0], append(argv[1:len(argv):len(argv)], args...)...)
	cmd.Env = append(os.Environ(), e.opts.Env...)
	cmd.SysProcAttr = groupAttr()
	cmd.Cancel = func() error { return forceStop(cmd.Process) }
	cmd.WaitDelay = pipeGrace
	out := &capped{limit: maxScriptOutput}
	errTail := newTail(stderrKeepBytes, stderrLines)
	cmd.Stdout, cmd.Stderr = out, errTail

	err := cmd.Run()
	res := scriptResult{stdout: out.Bytes(), stderr: errTail.String(), code: -1}
	if cmd.ProcessState != nil {
		res.code = cmd.ProcessState.ExitCode()
	}
	if out.truncated {
		return res, fmt.Errorf("%w: %s: stdout larger than %d bytes", ErrMalformedOutput, strings.Join(argv, " "), maxScriptOutput)
	}
	if ctx.Err() != nil {
		// The caller gave up; that is not the script's fault.
		return res, ctx.Err()
	}
	if tctx.Err() != nil {
		res.timedOut = true
		return res, nil
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) && !errors.Is(err, exec.ErrWaitDelay) {
		return res, fmt.Errorf("run %s: %w", strings.Join(argv, " "), err)
	}
	return res, nil
}
