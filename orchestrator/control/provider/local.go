package provider

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"
)

// Defaults for LocalOptions.
const (
	// DefaultReleaseTimeout is the worker's default drain_timeout (5m) plus
	// a minute to checkpoint and requeue what is still running; killing a
	// worker sooner would lose the progress the drain exists to save.
	DefaultReleaseTimeout = 6 * time.Minute
	// DefaultKeepEnded is how long List keeps reporting a Gone or Failed
	// instance, long enough for a few controller ticks to see how it ended.
	DefaultKeepEnded = 10 * time.Minute
)

// closeGrace is how long Close waits past ReleaseTimeout: by then every
// child has been SIGKILLed and only has to be reaped.
const closeGrace = 10 * time.Second

// LocalOptions configures a Local provider.
type LocalOptions struct {
	// Binary is the program started per worker; default: this executable.
	Binary string
	// Args returns a worker's arguments (without the program name). The
	// default is worker --config ConfigPath --pool POOL --id ID, leaving out
	// --config when ConfigPath is empty.
	Args func(pool, id string) []string
	// ConfigPath is passed to the default Args.
	ConfigPath string
	// Env is added to this process's environment for the children.
	Env []string
	// StartupDelay holds back each new worker of a pool, which stays
	// Launching meanwhile; it mimics a VM's boot so the policy's startup
	// cost can be exercised on one machine.
	StartupDelay map[string]time.Duration
	// Capacity caps a pool's live instances, to simulate stock-outs: Launch
	// beyond it starts what fits and returns ErrStockOut for the rest. A pool
	// missing from the map is unbounded.
	Capacity map[string]int
	// ReleaseTimeout is how long a released worker may drain before it is
	// SIGKILLed; default DefaultReleaseTimeout.
	ReleaseTimeout time.Duration
	// KeepEnded is how long ended instances stay in List; default
	// DefaultKeepEnded.
	KeepEnded time.Duration
	// Output receives the children's stdout and stderr; nil discards them
	// (the last lines of stderr are kept for errors regardless).
	Output io.Writer
	// Logger logs launches, exits and forced stops; nil discards.
	Logger *slog.Logger
	// Now is the clock for the instances' timestamps; default time.Now.
	Now func() time.Time
}

// Local is the provider that runs elastic workers as child processes of the
// controller: the default, for one machine, development and tests.
//
// Children are in their own process group and, on Linux, are SIGKILLed by
// the kernel if the controller dies. Close drains them all.
type Local struct {
	opts LocalOptions
	log  *slog.Logger

	mu       sync.Mutex
	children map[string]*child
	closed   bool
	// wg counts the goroutines behind children: delayed starts and exit
	// watchers. Close waits for it.
	wg sync.WaitGroup
	// exits receives each child's ID when its process ends (ExitNotifier).
	exits chan string
}

var (
	_ Provider     = (*Local)(nil)
	_ ExitNotifier = (*Local)(nil)
)

// NewLocal returns a Local provider, filling in the defaults of opts.
func NewLocal(opts LocalOptions) (*Local, error) {
	if opts.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("provider local: find own executable for workers: %w (set LocalOptions.Binary)", err)
		}
		opts.Binary = exe
	}
	if opts.Args == nil {
		cfg := opts.ConfigPath
		opts.Args = func(pool, id string) []string {
			args := []string{"worker"}
			if cfg != "" {
				args = append(args, "--config", cfg)
			}
			return append(args, "--pool", pool, "--id", id)
		}
	}
	for pool, d := range opts.StartupDelay {
		if d < 0 {
			return nil, fmt.Errorf("provider local: startup delay of pool %q is negative (%v)", pool, d)
		}
	}
	for pool, c := range opts.Capacity {
		if c < 0 {
			return nil, fmt.Errorf("provider local: capacity of pool %q is negative (%d)", pool, c)
		}
	}
	if opts.ReleaseTimeout < 0 || opts.KeepEnded < 0 {
		return nil, fmt.Errorf("provider local: negative ReleaseTimeout or KeepEnded")
	}
	if opts.ReleaseTimeout == 0 {
		opts.ReleaseTimeout = DefaultReleaseTimeout
	}
	if opts.KeepEnded == 0 {
		opts.KeepEnded = DefaultKeepEnded
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Local{opts: opts, log: log.With("provider", "local"), children: make(map[string]*child),
		exits: make(chan string, exitBuffer)}, nil
}

// Launch starts n workers of pool. Without a startup delay the children are
// started before Launch returns, Running, and a failure to start them is an
// ErrLaunchFailed. With one they are returned Launching and start later; a
// failure then shows as a Failed instance in List.
func (l *Local) Launch(ctx context.Context, pool string, n int) ([]Instance, error) {
	if pool == "" || n < 0 {
		return nil, fmt.Errorf("provider local: launch %d of pool %q: need a pool and a count >= 0", n, pool)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, fmt.Errorf("provider local: launch: %w", ErrClosed)
	}
	l.prune()

	fit, limit := n, -1
	if c, ok := l.opts.Capacity[pool]; ok {
		limit = c
		fit = min(n, max(0, c-l.live(pool)))
	}
	delay := l.opts.StartupDelay[pool]
	now := l.opts.Now()
	var out []Instance
	for range fit {
		c := &child{inst: Instance{ID: newID(pool), Pool: pool, State: Launching, LaunchedAt: now},
			cancelStart: make(chan struct{})}
		if delay > 0 {
			l.children[c.inst.ID] = c
			l.wg.Add(1)
			go l.startAfter(c, delay)
			out = append(out, c.inst)
			continue
		}
		if err := l.start(c); err != nil {
			// The binary is missing or not executable: the rest would fail
			// the same way, so stop here.
			return out, &LaunchError{Provider: "local", Pool: pool, Requested: n, Started: len(out),
				Attempts: 1, Kind: ErrLaunchFailed, Cause: err}
		}
		l.children[c.inst.ID] = c
		out = append(out, c.inst)
	}
	for _, in := range out {
		l.log.Info("launched", "id", in.ID, "pool", pool, "state", in.State, "delay", delay)
	}
	if fit < n {
		return out, &LaunchError{Provider: "local", Pool: pool, Requested: n, Started: len(out), Attempts: 1,
			Kind: ErrStockOut, Detail: fmt.Sprintf("capacity %d, %d live", limit, l.live(pool)-len(out))}
	}
	return out, nil
}

// Release drains one worker: SIGTERM now, SIGKILL after ReleaseTimeout. It
// returns without waiting for the exit, which can take the whole drain;
// List shows the instance Releasing, then Gone. A worker still in its
// startup delay is never started. Releasing an ended instance is a no-op.
func (l *Local) Release(ctx context.Context, id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.children[id]
	if !ok {
		return fmt.Errorf("provider local: release %q: %w", id, ErrUnknownInstance)
	}
	l.release(c)
	return nil
}

// List returns every live instance and those that ended within KeepEnded,
// oldest launch first.
func (l *Local) List(ctx context.Context) ([]Instance, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.prune()
	out := make([]Instance, 0, len(l.children))
	for _, c := range l.children {
		out = append(out, c.inst)
	}
	slices.SortFunc(out, func(a, b Instance) int {
		return cmp.Or(a.LaunchedAt.Compare(b.LaunchedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Close releases every live worker (each drains, then is SIGKILLed after
// ReleaseTimeout) and waits for them to exit, for at most ReleaseTimeout
// plus a short grace. Launch fails after Close. Draining matters even
// though the kernel would kill the children with the controller: a drained
// worker checkpoints and requeues its jobs instead of losing their work.
func (l *Local) Close() error {
	l.mu.Lock()
	l.closed = true
	for _, c := range l.children {
		l.release(c)
	}
	l.mu.Unlock()

	done := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(done)
	}()
	bound := l.opts.ReleaseTimeout + closeGrace
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
		// The waiting goroutine ends when the children are finally reaped.
		return fmt.Errorf("provider local: close: workers still running after %v", bound)
	}
}

// live counts pool's instances that still hold capacity. l.mu is held.
func (l *Local) live(pool string) int {
	n := 0
	for _, c := range l.children {
		if c.inst.Pool == pool && c.inst.State.Live() {
			n++
		}
	}
	return n
}

// prune forgets instances that ended more than KeepEnded ago, so a long-lived
// controller does not accumulate them. l.mu is held.
func (l *Local) prune() {
	cutoff := l.opts.Now().Add(-l.opts.KeepEnded)
	for id, c := range l.children {
		if !c.inst.State.Live() && c.endedAt.Before(cutoff) {
			delete(l.children, id)
		}
	}
}

// newID names a new instance after its pool, so logs and the worker
// registry show where a worker belongs, with a random suffix so IDs stay
// unique across controller restarts.
func newID(pool string) string {
	var b [5]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return pool + "-" + hex.EncodeToString(b[:])
}
