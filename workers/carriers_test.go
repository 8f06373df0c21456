package workers

import (
	"testing"
	"time"
)

// TestCarriersKeepTheirGoroutines: an attempt handed over while a carrier
// waits runs on that carrier, not a new goroutine; two at once need two.
func TestCarriersKeepTheirGoroutines(t *testing.T) {
	c := newCarriers()
	defer c.stop()
	ran := make(chan int, 4)
	c.carry(func() { ran <- 1 })
	<-ran
	waitFor(t, "the carrier to wait", func() bool { return c.waiting.Load() == 1 })
	c.carry(func() { ran <- 2 })
	if got := <-ran; got != 2 || c.started.Load() != 1 {
		t.Fatalf("second attempt ran (%d) on one of %d carriers, want 1", got, c.started.Load())
	}
	waitFor(t, "the carrier to wait again", func() bool { return c.waiting.Load() == 1 })
	hold := make(chan struct{})
	c.carry(func() { <-hold; ran <- 3 })
	waitFor(t, "the carrier to take the held attempt", func() bool { return c.waiting.Load() == 0 })
	c.carry(func() { ran <- 4 })
	if got := <-ran; got != 4 || c.started.Load() != 2 {
		t.Fatalf("with one carrier busy, attempt %d ran on one of %d carriers, want a second one", got, c.started.Load())
	}
	close(hold)
	if got := <-ran; got != 3 {
		t.Fatalf("held attempt: %d", got)
	}
}

// TestCarriersStopWaitsForTheBusyAndEndsTheIdle: stop returns only after
// an attempt being carried ends, without waiting out the idle time of
// the carriers that wait; an attempt handed over after stop still runs.
func TestCarriersStopWaitsForTheBusyAndEndsTheIdle(t *testing.T) {
	c := newCarriers()
	done := make(chan struct{})
	c.carry(func() { close(done) })
	<-done
	waitFor(t, "the carrier to wait", func() bool { return c.waiting.Load() == 1 })
	hold, held := make(chan struct{}), make(chan struct{})
	c.carry(func() { <-hold; close(held) })
	stopped := make(chan struct{})
	start := time.Now()
	go func() { c.stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("stop returned while an attempt was being carried")
	case <-time.After(50 * time.Millisecond):
	}
	close(hold)
	<-held
	select {
	case <-stopped:
	case <-time.After(2 * time.Second):
		t.Fatal("stop did not return after the last attempt ended")
	}
	if d := time.Since(start); d >= carrierIdle {
		t.Fatalf("stop took %v: it waited out the idle carriers", d)
	}
	after := make(chan struct{})
	c.carry(func() { close(after) })
	select {
	case <-after:
	case <-time.After(2 * time.Second):
		t.Fatal("an attempt handed over after stop did not run")
	}
}
