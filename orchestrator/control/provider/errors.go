package provider

import (
	"errors"
	"fmt"
	"strings"
)

// The errors a controller tells apart. They are matched with errors.Is; the
// value returned is a *LaunchError (or wraps one) with the details.
var (
	// ErrStockOut means the provider has no capacity for the pool right now
	// (a spot stock-out, a quota, a full region). It is reported at once,
	// never retried here, so the policy can fall back to another pool
	// (spot to on-demand, another region) without waiting.
	ErrStockOut = errors.New("stock-out")
	// ErrLaunchFailed means a launch broke for another reason (a script or
	// binary failed, a timeout). It is worth retrying with backoff.
	ErrLaunchFailed = errors.New("launch failed")
	// ErrUnknownInstance means an instance ID the provider does not know.
	ErrUnknownInstance = errors.New("unknown instance")
	// ErrMalformedOutput means an exec script broke the output contract.
	// It is neither retried nor taken for a stock-out: the instances it may
	// have started are found again by List.
	ErrMalformedOutput = errors.New("malformed script output")
	// ErrClosed means the provider was closed.
	ErrClosed = errors.New("provider closed")
)

// LaunchError reports a Launch that started fewer instances than asked.
type LaunchError struct {
	// Provider names the implementation ("local", "exec").
	Provider string
	// Pool and Requested are what Launch was asked for.
	Pool      string
	Requested int
	// Started is how many instances were returned alongside the error.
	Started int
	// Attempts is how many times Launch was tried (more than 1 only under
	// WithRetry).
	Attempts int
	// Kind is ErrStockOut or ErrLaunchFailed.
	Kind error
	// Detail says what happened, such as a script's exit code and the last
	// lines of its stderr.
	Detail string
	// Cause is the underlying error, if any.
	Cause error
}

// Error renders the whole story on one line, for logs and events.
func (e *LaunchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "provider %s: launch %d of pool %q: %v", e.Provider, e.Requested, e.Pool, e.Kind)
	if e.Started > 0 {
		fmt.Fprintf(&b, " (%d started)", e.Started)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Cause != nil {
		fmt.Fprintf(&b, ": %v", e.Cause)
	}
	return b.String()
}

// Unwrap exposes both the kind and the cause to errors.Is and errors.As.
func (e *LaunchError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Cause}
}
