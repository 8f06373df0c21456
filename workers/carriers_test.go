package workers

import (
	"testing"
	"testing/synctest"
	"time"
)

// The carriers' tests run in a synctest bubble: synctest.Wait returns
// when every carrier waits, so no sleep has to guess when they do, and
// the timeouts below fire on the bubble's clock, at once in real time.

// TestCarriersKeepTheirGoroutines: an attempt handed to a carrier that
// waits runs on it, not on a new goroutine; while the only carrier is
// busy, carry starts a second.
func TestCarriersKeepTheirGoroutines(t *testing.T) { synctest.Test(t, testCarriersKeepTheirGoroutines) }

func testCarriersKeepTheirGoroutines(t *testing.T) {
	c := newCarriers()
	defer c.stop()
	ran := make(chan int, 4)
	c.carry(func() { ran <- 1 })
	<-ran
	// Handed over as carry does, but waiting for the carrier to be ready:
	// carry itself starts a new one if it is not yet.
	handOver := func(f func()) {
		t.Helper()
		select {
		case c.work <- f:
		case <-time.After(2 * time.Second):
			t.Fatal("the carrier that ended its attempt did not wait for another")
		}
	}
	handOver(func() { ran <- 2 })
	if got := <-ran; got != 2 || c.started.Load() != 1 {
		t.Fatalf("second attempt ran (%d) on one of %d carriers, want 1", got, c.started.Load())
	}
	hold := make(chan struct{})
	handOver(func() { <-hold; ran <- 3 }) // taken: the only carrier is busy
	c.carry(func() { ran <- 4 })
	if got := <-ran; got != 4 || c.started.Load() != 2 {
		t.Fatalf("with the only carrier busy, attempt %d ran on one of %d carriers, want a second one", got, c.started.Load())
	}
	close(hold)
	if got := <-ran; got != 3 {
		t.Fatalf("held attempt: %d", got)
	}
	// And carry itself hands over: attempts one after another, each once
	// the carrier of the one before waits again, start no new carrier.
	for range 50 {
		synctest.Wait()
		done := make(chan struct{})
		c.carry(func() { close(done) })
		<-done
	}
	if n := c.started.Load(); n != 2 {
		t.Fatalf("50 attempts carried one after another started %d carriers, want the 2 already waiting: carry does not hand over to a waiting one", n)
	}
}

// TestCarriersStopWaitsForTheBusyAndEndsTheIdle: stop returns only after
// an attempt being carried ends, without waiting out the idle time of
// the carriers that wait; an attempt handed over after stop still runs.
func TestCarriersStopWaitsForTheBusyAndEndsTheIdle(t *testing.T) {
	synctest.Test(t, testCarriersStopWaitsForTheBusyAndEndsTheIdle)
}

func testCarriersStopWaitsForTheBusyAndEndsTheIdle(t *testing.T) {
	c := newCarriers()
	hold, held := make(chan struct{}), make(chan struct{})
	c.carry(func() { <-hold; close(held) }) // a carrier, busy until released
	done := make(chan struct{})
	c.carry(func() { close(done) }) // a second one, idle once this returns
	<-done
	if n := c.started.Load(); n != 2 {
		t.Fatalf("%d carriers, want one busy and one idle", n)
	}
	stopped := make(chan struct{})
	start := time.Now()
	go func() { c.stop(); close(stopped) }()
	synctest.Wait()
	select {
	case <-stopped:
		t.Fatal("stop returned while an attempt was being carried")
	default:
	}
	close(hold)
	<-held
	select {
	case <-stopped:
	case <-time.After(2 * time.Second):
		t.Fatal("stop did not return after the last attempt ended")
	}
	// The bubble's clock moves only when everything waits on a timer:
	// stop and the carriers it ends need none.
	if d := time.Since(start); d != 0 {
		t.Fatalf("stop took %v: it waited on a timer, such as the idle carriers'", d)
	}
	after := make(chan struct{})
	c.carry(func() { close(after) })
	select {
	case <-after:
	case <-time.After(2 * time.Second):
		t.Fatal("an attempt handed over after stop did not run")
	}
}
