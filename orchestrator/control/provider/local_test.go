//go:build unix

package provider

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// testLocal is a Local running fake workers that report into dir.
type testLocal struct {
	*Local
	dir string
}

// newTestLocal starts a Local with fake workers; env adds FAKEWORKER_*
// settings. It is closed when the test ends.
func newTestLocal(t *testing.T, opts LocalOptions, env ...string) *testLocal {
	t.Helper()
	dir := t.TempDir()
	if opts.Binary == "" {
		opts.Binary = fakeWorker
	}
	if opts.ReleaseTimeout == 0 {
		opts.ReleaseTimeout = 5 * time.Second
	}
	opts.Env = append([]string{"FAKEWORKER_DIR=" + dir}, env...)
	l, err := NewLocal(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return &testLocal{Local: l, dir: dir}
}

// instance returns id's current view from List.
func (l *testLocal) instance(t *testing.T, id string) Instance {
	t.Helper()
	list, err := l.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range list {
		if in.ID == id {
			return in
		}
	}
	t.Fatalf("instance %s not in List: %+v", id, list)
	return Instance{}
}

// waitState polls until id is in state.
func (l *testLocal) waitState(t *testing.T, id string, state State) Instance {
	t.Helper()
	var in Instance
	waitFor(t, 10*time.Second, id+" "+string(state), func() bool {
		in = l.instance(t, id)
		return in.State == state
	})
	return in
}

// args waits for the fake worker id to be up and returns its arguments.
func (l *testLocal) args(t *testing.T, id string) []string {
	t.Helper()
	var b []byte
	waitFor(t, 10*time.Second, "worker "+id+" to start", func() bool {
		var err error
		b, err = os.ReadFile(filepath.Join(l.dir, id+".args"))
		return err == nil
	})
	return strings.Split(string(b), "\n")
}

// drained reports whether the fake worker id got SIGTERM.
func (l *testLocal) drained(id string) bool {
	_, err := os.Stat(filepath.Join(l.dir, id+".draining"))
	return err == nil
}

func TestLocalLaunchRunsWorkers(t *testing.T) {
	l := newTestLocal(t, LocalOptions{ConfigPath: "/etc/ballast.yaml"})
	insts, err := l.Launch(context.Background(), "spot", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(insts) != 2 || insts[0].ID == insts[1].ID {
		t.Fatalf("want 2 distinct instances, got %+v", insts)
	}
	for _, in := range insts {
		if in.State != Running || in.Pool != "spot" || in.LaunchedAt.IsZero() || in.StartedAt.IsZero() {
			t.Errorf("instance %+v: want running in pool spot with both timestamps", in)
		}
		want := []string{"worker", "--config", "/etc/ballast.yaml", "--pool", "spot", "--id", in.ID}
		if got := l.args(t, in.ID); !slices.Equal(got, want) {
			t.Errorf("args of %s = %q, want %q", in.ID, got, want)
		}
	}
	list, err := l.List(context.Background())
	if err != nil || len(list) != 2 {
		t.Fatalf("List = %+v, %v; want the 2 instances", list, err)
	}
}

func TestLocalCustomArgs(t *testing.T) {
	l := newTestLocal(t, LocalOptions{Args: func(pool, id string) []string {
		return []string{"--id", id, "--slots", "4", "--pool", pool}
	}})
	insts, err := l.Launch(context.Background(), "ondemand", 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--id", insts[0].ID, "--slots", "4", "--pool", "ondemand"}
	if got := l.args(t, insts[0].ID); !slices.Equal(got, want) {
		t.Errorf("args = %q, want %q", got, want)
	}
}

func TestLocalStartupDelay(t *testing.T) {
	const delay = 300 * time.Millisecond
	l := newTestLocal(t, LocalOptions{StartupDelay: map[string]time.Duration{"spot": delay}})
	insts, err := l.Launch(context.Background(), "spot", 1)
	if err != nil {
		t.Fatal(err)
	}
	id := insts[0].ID
	if insts[0].State != Launching {
		t.Fatalf("state right after Launch = %s, want launching", insts[0].State)
	}
	if in := l.instance(t, id); in.State != Launching || !in.StartedAt.IsZero() {
		t.Fatalf("before the delay: %+v, want launching and not started", in)
	}
	if _, err := os.Stat(filepath.Join(l.dir, id+".args")); err == nil {
		t.Fatal("worker process started before its startup delay")
	}
	in := l.waitState(t, id, Running)
	if waited := in.StartedAt.Sub(in.LaunchedAt); waited < delay {
		t.Errorf("started %v after launch, want at least %v", waited, delay)
	}
	l.args(t, id)
}

func TestLocalReleaseDuringStartupDelay(t *testing.T) {
	l := newTestLocal(t, LocalOptions{StartupDelay: map[string]time.Duration{"spot": time.Hour}})
	insts, err := l.Launch(context.Background(), "spot", 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(context.Background(), insts[0].ID); err != nil {
		t.Fatal(err)
	}
	if in := l.instance(t, insts[0].ID); in.State != Gone || in.Err == "" {
		t.Errorf("released before start: %+v, want gone with a note", in)
	}
	// Close must not wait out the hour: the pending start is abandoned.
	start := time.Now()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
}

func TestLocalCapacityStockOut(t *testing.T) {
	l := newTestLocal(t, LocalOptions{Capacity: map[string]int{"spot": 2}})
	ctx := context.Background()
	insts, err := l.Launch(ctx, "spot", 3)
	if !errors.Is(err, ErrStockOut) || errors.Is(err, ErrLaunchFailed) {
		t.Fatalf("Launch 3 over capacity 2: err = %v, want ErrStockOut only", err)
	}
	var le *LaunchError
	if !errors.As(err, &le) || le.Started != 2 || le.Requested != 3 || le.Pool != "spot" {
		t.Fatalf("LaunchError = %+v", le)
	}
	if len(insts) != 2 {
		t.Fatalf("got %d instances, want the 2 that fit", len(insts))
	}
	if _, err := l.Launch(ctx, "spot", 1); !errors.Is(err, ErrStockOut) {
		t.Fatalf("Launch at capacity: err = %v, want ErrStockOut", err)
	}
	// Other pools are not capped.
	if _, err := l.Launch(ctx, "ondemand", 1); err != nil {
		t.Fatalf("uncapped pool: %v", err)
	}
	// Capacity frees up once a worker is gone.
	l.args(t, insts[0].ID)
	if err := l.Release(ctx, insts[0].ID); err != nil {
		t.Fatal(err)
	}
	l.waitState(t, insts[0].ID, Gone)
	if more, err := l.Launch(ctx, "spot", 1); err != nil || len(more) != 1 {
		t.Fatalf("Launch after a release: %v, %v", more, err)
	}
}

func TestLocalReleaseDrains(t *testing.T) {
	l := newTestLocal(t, LocalOptions{})
	ctx := context.Background()
	insts, err := l.Launch(ctx, "spot", 1)
	if err != nil {
		t.Fatal(err)
	}
	id := insts[0].ID
	l.args(t, id)
	if err := l.Release(ctx, id); err != nil {
		t.Fatal(err)
	}
	if st := l.instance(t, id).State; st != Releasing && st != Gone {
		t.Errorf("state after Release = %s, want releasing", st)
	}
	in := l.waitState(t, id, Gone)
	if in.Err != "" {
		t.Errorf("a clean drain should leave no error, got %q", in.Err)
	}
	if !l.drained(id) {
		t.Error("worker did not get SIGTERM")
	}
	if err := l.Release(ctx, id); err != nil {
		t.Errorf("second Release: %v, want nil", err)
	}
	err = l.Release(ctx, "spot-nosuch")
	if !errors.Is(err, ErrUnknownInstance) || !strings.Contains(err.Error(), "spot-nosuch") {
		t.Errorf("Release of an unknown ID: %v, want ErrUnknownInstance naming it", err)
	}
}

func TestLocalReleaseForceStops(t *testing.T) {
	l := newTestLocal(t, LocalOptions{ReleaseTimeout: 300 * time.Millisecond}, "FAKEWORKER_IGNORE_TERM=1")
	insts, err := l.Launch(context.Background(), "spot", 1)
	if err != nil {
		t.Fatal(err)
	}
	id := insts[0].ID
	l.args(t, id)
	start := time.Now()
	if err := l.Release(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	in := l.waitState(t, id, Gone)
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("killed after %v, before the release timeout", d)
	}
	if !strings.Contains(in.Err, "force-stopped") {
		t.Errorf("Err = %q, want a force-stop note", in.Err)
	}
	if l.drained(id) {
		t.Error("worker ignoring SIGTERM should not have drained")
	}
}

func TestLocalChildFailure(t *testing.T) {
	l := newTestLocal(t, LocalOptions{}, "FAKEWORKER_EXIT=2")
	insts, err := l.Launch(context.Background(), "spot", 1)
	if err != nil {
		t.Fatal(err)
	}
	in := l.waitState(t, insts[0].ID, Failed)
	for _, want := range []string{"exit status 2", "fakeworker: boom"} {
		if !strings.Contains(in.Err, want) {
			t.Errorf("Err = %q, want it to contain %q", in.Err, want)
		}
	}
	// A failed worker no longer counts against capacity, and releasing it
	// is a no-op.
	if err := l.Release(context.Background(), insts[0].ID); err != nil {
		t.Errorf("Release of a failed worker: %v", err)
	}
}

func TestLocalCleanExitIsGone(t *testing.T) {
	l := newTestLocal(t, LocalOptions{}, "FAKEWORKER_EXIT=0")
	insts, err := l.Launch(context.Background(), "spot", 1)
	if err != nil {
		t.Fatal(err)
	}
	if in := l.waitState(t, insts[0].ID, Gone); in.Err != "" {
		t.Errorf("clean exit: Err = %q, want none", in.Err)
	}
}

func TestLocalLaunchFailed(t *testing.T) {
	l := newTestLocal(t, LocalOptions{Binary: filepath.Join(t.TempDir(), "missing")})
	insts, err := l.Launch(context.Background(), "spot", 2)
	if !errors.Is(err, ErrLaunchFailed) || len(insts) != 0 {
		t.Fatalf("Launch of a missing binary: %v, %v; want ErrLaunchFailed and no instances", insts, err)
	}
	if list, _ := l.List(context.Background()); len(list) != 0 {
		t.Errorf("List after a failed launch = %+v, want empty", list)
	}
}

func TestLocalCloseReleasesAll(t *testing.T) {
	dir := t.TempDir()
	l, err := NewLocal(LocalOptions{Binary: fakeWorker, Env: []string{"FAKEWORKER_DIR=" + dir},
		ReleaseTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	tl := &testLocal{Local: l, dir: dir}
	ctx := context.Background()
	a, err := l.Launch(ctx, "spot", 2)
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Launch(ctx, "ondemand", 1)
	if err != nil {
		t.Fatal(err)
	}
	all := append(a, b...)
	for _, in := range all {
		tl.args(t, in.ID)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Close waited: every worker drained and was reaped before it returned.
	for _, in := range all {
		if !tl.drained(in.ID) {
			t.Errorf("%s was not drained", in.ID)
		}
		if got := tl.instance(t, in.ID); got.State != Gone {
			t.Errorf("%s after Close: %s, want gone", in.ID, got.State)
		}
	}
	if _, err := l.Launch(ctx, "spot", 1); !errors.Is(err, ErrClosed) {
		t.Errorf("Launch after Close: %v, want ErrClosed", err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestLocalForgetsEndedInstances(t *testing.T) {
	base := time.Now()
	var skew atomic.Int64 // how far the test clock is ahead of base
	now := func() time.Time { return base.Add(time.Duration(skew.Load())) }
	l := newTestLocal(t, LocalOptions{KeepEnded: time.Minute, Now: now}, "FAKEWORKER_EXIT=0")
	insts, err := l.Launch(context.Background(), "spot", 1)
	if err != nil {
		t.Fatal(err)
	}
	l.waitState(t, insts[0].ID, Gone)
	skew.Store(int64(2 * time.Minute))
	if list, _ := l.List(context.Background()); len(list) != 0 {
		t.Errorf("List after KeepEnded = %+v, want empty", list)
	}
	if err := l.Release(context.Background(), insts[0].ID); !errors.Is(err, ErrUnknownInstance) {
		t.Errorf("Release of a forgotten instance: %v, want ErrUnknownInstance", err)
	}
}

func TestNewLocalValidates(t *testing.T) {
	for _, opts := range []LocalOptions{
		{Binary: "x", Capacity: map[string]int{"spot": -1}},
		{Binary: "x", StartupDelay: map[string]time.Duration{"spot": -time.Second}},
		{Binary: "x", ReleaseTimeout: -time.Second},
	} {
		if _, err := NewLocal(opts); err == nil {
			t.Errorf("NewLocal(%+v) accepted bad options", opts)
		}
	}
	l, err := NewLocal(LocalOptions{Binary: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Launch(context.Background(), "", 1); err == nil {
		t.Error("Launch without a pool accepted")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// WithRetry leaves Release and List to the wrapped provider.
func TestRetryPassesThrough(t *testing.T) {
	l := newTestLocal(t, LocalOptions{Capacity: map[string]int{"spot": 1}})
	p := WithRetry(l, fastRetry)
	insts, err := p.Launch(context.Background(), "spot", 2)
	if !errors.Is(err, ErrStockOut) || len(insts) != 1 {
		t.Fatalf("Launch = %v, %v", insts, err)
	}
	if list, err := p.List(context.Background()); err != nil || len(list) != 1 {
		t.Fatalf("List = %v, %v", list, err)
	}
	if err := p.Release(context.Background(), insts[0].ID); err != nil {
		t.Fatal(err)
	}
}
