package workers

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// The slot book is goroutines, a lock and timers: its tests run in a
// synctest bubble, where synctest.Wait returns once every waiter is
// blocked (no polling, no sleep to let a wrong start happen) and the
// timers of admitPlaced and of the contexts fire on the bubble's clock.

// settled waits until every goroutine of the bubble is blocked, then
// checks what, which must hold by then.
func settled(t *testing.T, what string, cond func() bool) {
	t.Helper()
	synctest.Wait()
	if !cond() {
		t.Fatalf("everything blocked, and not %s", what)
	}
}

func TestSlotBookCountsSlots(t *testing.T) { synctest.Test(t, testSlotBookCountsSlots) }

func testSlotBookCountsSlots(t *testing.T) {
	b := newSlotBook(4, nil)
	ctx := context.Background()
	if n, err := b.admitShared(ctx, "a"); err != nil || n != 1 {
		t.Fatalf("first one-slot admit: %d %v", n, err)
	}
	if n, err := b.admitPlaced(ctx, "big", 3, time.Second, func() bool { return true }); err != nil || n != 3 {
		t.Fatalf("three-slot admit: %d %v", n, err)
	}
	if got := b.busy(); got != 4 {
		t.Errorf("busy %d, want 4", got)
	}
	full, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := b.admitShared(full, "over"); err == nil {
		t.Error("a fifth slot was admitted on a full four-slot book")
	}
	b.release("a")
	if n, err := b.admitShared(ctx, "c"); err != nil || n != 1 {
		t.Errorf("the freed slot was not admitted again: %d %v", n, err)
	}
	if _, err := b.admitPlaced(ctx, "huge", 5, time.Second, func() bool { return true }); err != errTooLarge {
		t.Errorf("five slots on four: %v, want errTooLarge", err)
	}
}

// A placed job's reservation holds back one-slot work: with two of four
// slots busy and a three-slot job waiting, a one-slot delivery waits too,
// and the three-slot job starts first once a slot frees.
func TestSlotBookReservationBeatsTheStream(t *testing.T) {
	synctest.Test(t, testSlotBookReservationBeatsTheStream)
}

func testSlotBookReservationBeatsTheStream(t *testing.T) {
	b := newSlotBook(4, nil)
	ctx := context.Background()
	for _, k := range []string{"s1", "s2"} {
		if _, err := b.admitShared(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	var order []string
	var mu sync.Mutex
	note := func(k string) { mu.Lock(); order = append(order, k); mu.Unlock() }
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if _, err := b.admitPlaced(ctx, "big", 3, time.Second, func() bool { return true }); err == nil {
			note("big")
		}
	}()
	settled(t, "the reservation", func() bool { return b.busy() == 4 })
	go func() {
		defer wg.Done()
		if _, err := b.admitShared(ctx, "s3"); err == nil {
			note("s3")
		}
	}()
	// Both wait now, past the placed one's recheck: neither may start.
	time.Sleep(2 * time.Second)
	synctest.Wait()
	mu.Lock()
	if len(order) != 0 {
		t.Fatalf("started %v while two slots were busy and three reserved", order)
	}
	mu.Unlock()
	b.release("s1")
	settled(t, "the placed job started", func() bool { mu.Lock(); defer mu.Unlock(); return len(order) == 1 })
	b.release("s2")
	b.release("big")
	wg.Wait()
	if order[0] != "big" || order[1] != "s3" {
		t.Errorf("order %v, want the reserved three-slot job first", order)
	}
}

// A waiting placed delivery withdraws when its placement no longer stands,
// and a stopping worker sends every waiter away.
func TestSlotBookWithdrawAndClose(t *testing.T) { synctest.Test(t, testSlotBookWithdrawAndClose) }

func testSlotBookWithdrawAndClose(t *testing.T) {
	b := newSlotBook(2, nil)
	ctx := context.Background()
	if _, err := b.admitShared(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	var stand atomic.Bool
	var asked atomic.Int64
	stand.Store(true)
	done := make(chan int)
	go func() {
		got, _ := b.admitPlaced(ctx, "p", 2, 10*time.Millisecond, func() bool { asked.Add(1); return stand.Load() })
		done <- got
	}()
	settled(t, "the reservation", func() bool { return b.busy() == 2 })
	// Still standing at every recheck, the placement keeps waiting.
	time.Sleep(time.Second)
	synctest.Wait()
	select {
	case got := <-done:
		t.Fatalf("a placement that still stands stopped waiting with %d slots", got)
	default:
	}
	// Every 10ms over a second: 100 asks, or 99 if the sleep's timer and
	// the hundredth recheck's, due at the same instant, woke in that order.
	if n := asked.Load(); n < 99 || n > 100 {
		t.Errorf("asked %d times in a second whether the placement stands, want every 10ms", n)
	}
	stand.Store(false)
	start := time.Now()
	if got := <-done; got != 0 {
		t.Errorf("a withdrawn placement got %d slots", got)
	}
	if d := time.Since(start); d > 10*time.Millisecond {
		t.Errorf("the withdrawal took %v, want it at the next recheck, within 10ms", d)
	}
	if b.busy() != 1 {
		t.Errorf("busy %d after the withdrawal, want 1", b.busy())
	}
	errc := make(chan error)
	go func() { _, err := b.admitPlaced(ctx, "q", 2, time.Second, func() bool { return true }); errc <- err }()
	settled(t, "the second reservation", func() bool { return b.busy() == 2 })
	b.close()
	if err := <-errc; err != errBookClosed {
		t.Errorf("waiter on close: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	b2 := newSlotBook(1, nil)
	_, _ = b2.admitShared(ctx, "x")
	if _, err := b2.admitShared(cctx, "y"); err == nil {
		t.Error("a cancelled context still admitted")
	}
}

// Random admits and releases never hand out more slots than the book has.
func TestSlotBookNeverOversubscribes(t *testing.T) {
	const total = 8
	b := newSlotBook(total, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	var wg sync.WaitGroup
	var bad atomic.Int32
	check := func() {
		b.mu.Lock()
		if b.used() > total {
			bad.Add(1)
		}
		b.mu.Unlock()
	}
	for g := 0; g < 16; g++ {
		n := 1 + rng.IntN(4)
		shared := rng.IntN(2) == 0
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				key := string(rune('a'+g)) + string(rune('0'+i%10))
				var err error
				if shared {
					_, err = b.admitShared(context.Background(), key)
				} else {
					_, err = b.admitPlaced(context.Background(), key, n, time.Second, func() bool { return true })
				}
				if err != nil {
					bad.Add(1)
					return
				}
				check()
				b.release(key)
			}
		}(g)
	}
	wg.Wait()
	if bad.Load() != 0 {
		t.Errorf("%d violations", bad.Load())
	}
	if b.busy() != 0 {
		t.Errorf("busy %d after everything was released", b.busy())
	}
}

// TestTakeHoldsFreeSlotsWithoutReportingThem: the taker holds every free
// slot while it looks for work, so a placed job cannot take them under
// it; the slots still count as free in what the worker reports until a
// delivery fills them, and those it did not fill go back.
func TestTakeHoldsFreeSlotsWithoutReportingThem(t *testing.T) {
	synctest.Test(t, testTakeHoldsFreeSlotsWithoutReportingThem)
}

func testTakeHoldsFreeSlotsWithoutReportingThem(t *testing.T) {
	b := newSlotBook(4, nil)
	if n, err := b.admitShared(context.Background(), "running"); n != 1 || err != nil {
		t.Fatalf("admitShared: %d %v", n, err)
	}
	h, err := b.admitTake(context.Background(), 8)
	keys := h.keys
	if err != nil || len(keys) != 3 {
		t.Fatalf("admitTake: %v %v; want the 3 free slots", keys, err)
	}
	if got := b.busy(); got != 1 {
		t.Fatalf("busy %d while the taker looks, want 1", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := b.admitShared(ctx, "other"); err == nil {
		t.Fatal("a slot the taker holds was given to another delivery")
	}
	if !b.seat(&h, "taken", 0) {
		t.Fatal("a taken job found no slot of the take's to sit in")
	}
	b.release(keys[1])
	b.release(keys[2])
	if got := b.busy(); got != 2 {
		t.Fatalf("busy %d after one take filled one slot, want 2", got)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	if h, err := b.admitTake(ctx2, 1); err != nil || len(h.keys) != 1 {
		t.Fatalf("admitTake of 1: %v %v", h.keys, err)
	}
}
