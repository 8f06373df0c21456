package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// DefaultScriptTimeout bounds one script call when ExecOptions.Timeout is
// unset: cloud CLIs are slow, but a hung one must not stall the controller.
const DefaultScriptTimeout = 2 * time.Minute

// ExitStockOut is the exit code by which a launch script reports a
// stock-out (see the package documentation for the whole contract).
const ExitStockOut = 3

// ExecOptions configures an Exec provider. Each script is an argv: the
// program, then fixed arguments; the contract's arguments are appended.
type ExecOptions struct {
	// Launch is called as LAUNCH POOL COUNT.
	Launch []string
	// Release is called as RELEASE ID.
	Release []string
	// List is called as LIST.
	List []string
	// Timeout bounds each call; default DefaultScriptTimeout. A call that
	// outlives it is killed with its whole process group.
	Timeout time.Duration
	// Env is added to this process's environment for the scripts.
	Env []string
	// Logger logs failed calls; nil discards.
	Logger *slog.Logger
	// Now is the clock for launch timestamps; default time.Now.
	Now func() time.Time
	// ListEvery is how long a List answer is reused; default
	// DefaultListEvery. The controller asks every tick, and a cloud CLI per
	// second is slow and rate-limited; launches and releases made through
	// this provider update the kept answer at once.
	ListEvery time.Duration
}

// DefaultListEvery is the default of ExecOptions.ListEvery.
const DefaultListEvery = 15 * time.Second

// Exec is the provider that delegates to operator scripts, so any cloud's
// CLI can be plugged in without Ballast knowing the cloud. The contract the
// scripts implement is in the package documentation.
type Exec struct {
	opts ExecOptions
	log  *slog.Logger

	mu       sync.Mutex
	listed   []Instance // the last List answer, with our own changes since
	listedAt time.Time  // zero: nothing kept
}

var _ Provider = (*Exec)(nil)

// NewExec returns an Exec provider. All three scripts are required: without
// List a restarted controller could not find the workers it pays for.
func NewExec(opts ExecOptions) (*Exec, error) {
	for name, argv := range map[string][]string{"launch": opts.Launch, "release": opts.Release, "list": opts.List} {
		if len(argv) == 0 || argv[0] == "" {
			return nil, fmt.Errorf("provider exec: no %s script", name)
		}
	}
	if opts.Timeout < 0 {
		return nil, fmt.Errorf("provider exec: negative timeout %v", opts.Timeout)
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultScriptTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ListEvery < 0 {
		return nil, fmt.Errorf("provider exec: negative list interval %v", opts.ListEvery)
	}
	if opts.ListEvery == 0 {
		opts.ListEvery = DefaultListEvery
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Exec{opts: opts, log: log.With("provider", "exec")}, nil
}

// Launch calls the launch script. Exit 0 with n instances is success; exit 3
// is ErrStockOut; any other exit, a timeout, or fewer than n instances is
// ErrLaunchFailed. The instances the script printed are returned in every
// case, since a script that failed halfway may still have started some.
func (e *Exec) Launch(ctx context.Context, pool string, n int) ([]Instance, error) {
	if pool == "" || n < 0 {
		return nil, fmt.Errorf("provider exec: launch %d of pool %q: need a pool and a count >= 0", n, pool)
	}
	if n == 0 {
		return nil, nil
	}
	now := e.opts.Now()
	res, err := e.run(ctx, e.opts.Launch, pool, strconv.Itoa(n))
	switch {
	case err != nil && (ctx.Err() != nil || errors.Is(err, ErrMalformedOutput)):
		return nil, fmt.Errorf("provider exec: launch %d of pool %q: %w", n, pool, err)
	case err != nil:
		// The script could not be run at all (missing, not executable).
		// The pool cannot launch, which the controller must hear as a
		// launch failure so its fallback applies.
		return nil, &LaunchError{Provider: "exec", Pool: pool, Requested: n, Attempts: 1,
			Kind: ErrLaunchFailed, Cause: err}
	}
	insts, perr := parseInstances(res.stdout, pool, []State{Launching, Running}, now)
	for i := range insts {
		if insts[i].State == Running && insts[i].StartedAt.IsZero() {
			insts[i].StartedAt = now
		}
	}
	e.remember(func(kept []Instance) []Instance { return append(kept, insts...) })
	lerr := &LaunchError{Provider: "exec", Pool: pool, Requested: n, Started: len(insts), Attempts: 1}
	switch {
	case res.code == ExitStockOut && !res.timedOut:
		lerr.Kind, lerr.Detail = ErrStockOut, res.describe(e.opts.Timeout)
	case res.code != 0 || res.timedOut:
		lerr.Kind, lerr.Detail = ErrLaunchFailed, res.describe(e.opts.Timeout)
	case perr != nil:
		// The script says it succeeded but its output cannot be trusted:
		// not a launch failure to retry, which could double the workers.
		return insts, fmt.Errorf("provider exec: launch %d of pool %q: %w", n, pool, perr)
	case len(insts) < n:
		lerr.Kind = ErrLaunchFailed
		lerr.Detail = fmt.Sprintf("exit code 0 but %d of %d instances reported", len(insts), n)
	default:
		return insts, nil
	}
	lerr.Cause = perr
	e.log.Warn("launch script", "pool", pool, "n", n, "err", lerr)
	return insts, lerr
}

// Release calls the release script with id. Releasing an unknown or gone
// instance must succeed by contract, so any failure is an error.
func (e *Exec) Release(ctx context.Context, id string) error {
	if id == "" {
		return errors.New("provider exec: release: empty instance ID")
	}
	res, err := e.run(ctx, e.opts.Release, id)
	if err != nil {
		return fmt.Errorf("provider exec: release %q: %w", id, err)
	}
	if res.code != 0 || res.timedOut {
		return fmt.Errorf("provider exec: release %q: %s", id, res.describe(e.opts.Timeout))
	}
	e.remember(func(kept []Instance) []Instance {
		for i := range kept {
			if kept[i].ID == id {
				kept[i].State = Releasing
			}
		}
		return kept
	})
	return nil
}

// remember applies a change this provider made to the kept List answer, so
// the controller sees its own launches and releases before the next call.
func (e *Exec) remember(change func([]Instance) []Instance) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.listedAt.IsZero() {
		e.listed = change(e.listed)
	}
}

// List calls the list script. Any state may be reported, and every line
// must name its pool. A malformed line fails the whole List: reconciling
// against a partial list could make the controller think workers are gone.
func (e *Exec) List(ctx context.Context) ([]Instance, error) {
	now := e.opts.Now()
	e.mu.Lock()
	if !e.listedAt.IsZero() && now.Sub(e.listedAt) < e.opts.ListEvery {
		kept := append([]Instance(nil), e.listed...)
		e.mu.Unlock()
		return kept, nil
	}
	e.mu.Unlock()
	res, err := e.run(ctx, e.opts.List)
	if err != nil {
		return nil, fmt.Errorf("provider exec: list: %w", err)
	}
	if res.code != 0 || res.timedOut {
		return nil, fmt.Errorf("provider exec: list: %s", res.describe(e.opts.Timeout))
	}
	insts, err := parseInstances(res.stdout, "", []State{Launching, Running, Releasing, Gone, Failed, StockedOut}, time.Time{})
	if err != nil {
		return nil, fmt.Errorf("provider exec: list: %w", err)
	}
	e.mu.Lock()
	e.listed, e.listedAt = append([]Instance(nil), insts...), now
	e.mu.Unlock()
	return insts, nil
}

// Close does nothing: every call runs in its caller and ends with it, and
// the instances belong to the cloud, not to this process.
func (e *Exec) Close() error { return nil }
