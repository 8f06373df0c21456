package retry

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The caps double from Base and stop at Max, also for a try count far past
// the point where the doubling would overflow.
func TestCap(t *testing.T) {
	b := Backoff{Base: 100 * time.Millisecond, Max: time.Second}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, w := range want {
		if got := b.Cap(i + 1); got != w*time.Millisecond {
			t.Errorf("Cap(%d) = %v, want %v", i+1, got, w*time.Millisecond)
		}
	}
	if got := b.Cap(10_000); got != time.Second {
		t.Errorf("Cap(10000) = %v, want the max", got)
	}
	unc := Backoff{Base: time.Second}
	if got := unc.Cap(200); got <= 0 {
		t.Errorf("uncapped Cap(200) = %v, want a positive duration", got)
	}
	if got := (Backoff{}).Cap(3); got != 0 {
		t.Errorf("zero Backoff Cap = %v, want 0", got)
	}
}

// Delay draws from [0, Cap(n)]: the fixed source's extremes give 0 and the
// cap itself, and the live source stays inside.
func TestDelayIsFullJitter(t *testing.T) {
	var asked int64
	low := Backoff{Base: 50 * time.Millisecond, Max: 400 * time.Millisecond, Rand: func(n int64) int64 { asked = n; return 0 }}
	if got := low.Delay(3); got != 0 || asked != int64(200*time.Millisecond)+1 {
		t.Errorf("Delay(3) with the lowest draw = %v (asked for [0,%d)), want 0 of [0,200ms]", got, asked)
	}
	high := low
	high.Rand = func(n int64) int64 { return n - 1 }
	if got := high.Delay(9); got != 400*time.Millisecond {
		t.Errorf("Delay(9) with the highest draw = %v, want the 400ms cap", got)
	}
	live := Backoff{Base: 10 * time.Millisecond, Max: 80 * time.Millisecond}
	seen := map[bool]bool{}
	for i := range 2000 {
		n := i%6 + 1
		d := live.Delay(n)
		if d < 0 || d > live.Cap(n) {
			t.Fatalf("Delay(%d) = %v, outside [0, %v]", n, d, live.Cap(n))
		}
		seen[d < live.Cap(n)/2] = true
	}
	if !seen[true] || !seen[false] {
		t.Errorf("2000 delays all fell in one half of their range: %v", seen)
	}
}

// Sleep ends when its context does, well before its duration, and says so.
func TestSleepHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	start := time.Now()
	err := Sleep(ctx, time.Minute)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep = %v, want context.Canceled", err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("Sleep took %v after its context was cancelled", el)
	}
	if err := Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep(done ctx, 0) = %v, want context.Canceled", err)
	}
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("Sleep(1ms) = %v", err)
	}
}

// Wait uses the injected Sleep, so a loop's test runs without waiting.
func TestWaitUsesInjectedSleep(t *testing.T) {
	var got []time.Duration
	b := Backoff{Base: time.Hour, Sleep: func(_ context.Context, d time.Duration) error { got = append(got, d); return nil }}
	for n := 1; n <= 3; n++ {
		if err := b.Wait(context.Background(), b.Cap(n)); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 3 || got[0] != time.Hour || got[2] != 4*time.Hour {
		t.Fatalf("injected Sleep saw %v, want [1h 2h 4h]", got)
	}
}
