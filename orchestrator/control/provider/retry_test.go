package provider

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// scripted is a Provider whose Launch replays canned results in order and
// records what it was asked.
type scripted struct {
	mu      sync.Mutex
	results []func(n int) ([]Instance, error)
	asked   []int
	at      []time.Time
}

func (s *scripted) Launch(ctx context.Context, pool string, n int) ([]Instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, n)
	s.at = append(s.at, time.Now())
	f := s.results[min(len(s.asked), len(s.results))-1]
	return f(n)
}

func (s *scripted) Release(context.Context, string) error    { return nil }
func (s *scripted) List(context.Context) ([]Instance, error) { return nil, nil }
func (s *scripted) Close() error                             { return nil }
func (s *scripted) calls() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.asked...)
}

// instances makes k running instances with fresh IDs.
func instances(k int, prefix string) []Instance {
	out := make([]Instance, k)
	for i := range out {
		out[i] = Instance{ID: prefix + strconv.Itoa(i), Pool: "spot", State: Running}
	}
	return out
}

func fail(started int, kind error) func(n int) ([]Instance, error) {
	return func(n int) ([]Instance, error) {
		return instances(started, "x"), &LaunchError{Provider: "fake", Pool: "spot", Requested: n,
			Started: started, Attempts: 1, Kind: kind, Detail: "api says no"}
	}
}

func succeed(n int) ([]Instance, error) { return instances(n, "ok"), nil }

var fastRetry = RetryOptions{Attempts: 3, Backoff: 20 * time.Millisecond, MaxBackoff: 30 * time.Millisecond}

func TestRetryRecoversFromLaunchFailures(t *testing.T) {
	s := &scripted{results: []func(int) ([]Instance, error){fail(0, ErrLaunchFailed), fail(0, ErrLaunchFailed), succeed}}
	r := WithRetry(s, fastRetry).(*retrying)
	r.bo.Rand = func(n int64) int64 { return n - 1 } // every wait its cap
	insts, err := r.Launch(context.Background(), "spot", 2)
	if err != nil || len(insts) != 2 {
		t.Fatalf("Launch = %v, %v; want 2 instances after retries", insts, err)
	}
	if got := s.calls(); len(got) != 3 {
		t.Fatalf("calls = %v, want 3", got)
	}
	// The wait's cap doubles from 20ms, capped at 30ms.
	for i, want := range []time.Duration{20 * time.Millisecond, 30 * time.Millisecond} {
		if gap := s.at[i+1].Sub(s.at[i]); gap < want {
			t.Errorf("wait before attempt %d = %v, want at least %v", i+2, gap, want)
		}
	}
}

func TestRetryAsksOnlyForMissing(t *testing.T) {
	s := &scripted{results: []func(int) ([]Instance, error){fail(2, ErrLaunchFailed), succeed}}
	insts, err := WithRetry(s, fastRetry).Launch(context.Background(), "spot", 5)
	if err != nil || len(insts) != 5 {
		t.Fatalf("Launch = %d instances, %v; want 5", len(insts), err)
	}
	if got := s.calls(); len(got) != 2 || got[0] != 5 || got[1] != 3 {
		t.Errorf("asked for %v, want [5 3]", got)
	}
}

func TestRetryReportsStockOutAtOnce(t *testing.T) {
	s := &scripted{results: []func(int) ([]Instance, error){fail(1, ErrStockOut), succeed}}
	insts, err := WithRetry(s, fastRetry).Launch(context.Background(), "spot", 3)
	if !errors.Is(err, ErrStockOut) || len(insts) != 1 {
		t.Fatalf("Launch = %v, %v; want the 1 started and ErrStockOut", insts, err)
	}
	if got := s.calls(); len(got) != 1 {
		t.Errorf("stock-out retried: calls = %v", got)
	}
	var le *LaunchError
	if !errors.As(err, &le) || le.Attempts != 1 {
		t.Errorf("LaunchError = %+v, want 1 attempt", le)
	}
}

func TestRetryGivesUp(t *testing.T) {
	s := &scripted{results: []func(int) ([]Instance, error){fail(1, ErrLaunchFailed)}}
	insts, err := WithRetry(s, fastRetry).Launch(context.Background(), "spot", 4)
	var le *LaunchError
	if !errors.As(err, &le) || !errors.Is(err, ErrLaunchFailed) {
		t.Fatalf("err = %v, want a LaunchError", err)
	}
	if le.Attempts != 3 || le.Requested != 4 || le.Started != 3 || len(insts) != 3 {
		t.Errorf("LaunchError = %+v with %d instances; want 3 attempts, 4 asked, 3 started", le, len(insts))
	}
	if !strings.Contains(err.Error(), "after 3 attempts") || !strings.Contains(err.Error(), "api says no") {
		t.Errorf("error %q should report the attempts and the last detail", err)
	}
	if got := s.calls(); len(got) != 3 || got[1] != 3 || got[2] != 2 {
		t.Errorf("asked for %v, want [4 3 2]", got)
	}
}

func TestRetryDoesNotRetryOtherErrors(t *testing.T) {
	bad := errors.New("bad output")
	s := &scripted{results: []func(int) ([]Instance, error){func(int) ([]Instance, error) { return nil, bad }}}
	if _, err := WithRetry(s, fastRetry).Launch(context.Background(), "spot", 1); !errors.Is(err, bad) {
		t.Fatalf("err = %v, want it unchanged", err)
	}
	if got := s.calls(); len(got) != 1 {
		t.Errorf("calls = %v, want 1", got)
	}
}

func TestRetryStopsWithContext(t *testing.T) {
	s := &scripted{results: []func(int) ([]Instance, error){fail(0, ErrLaunchFailed)}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := WithRetry(s, RetryOptions{Attempts: 5, Backoff: time.Hour}).Launch(ctx, "spot", 1)
		done <- err
	}()
	waitFor(t, 5*time.Second, "the first attempt", func() bool { return len(s.calls()) == 1 })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrLaunchFailed) {
			t.Errorf("err = %v, want the launch failure and context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Launch kept waiting out its backoff after the context ended")
	}
}
