package workers

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/ballastdev/ballast/workers/gpu"
)

// slotBook is the worker's own account of its slots: how many each
// delivery holds, and which placed deliveries wait for slots to free.
// Which GPUs a holder gets is the GPU allocator's, which the book keeps
// under its own lock on a GPU worker: there a slot is a device, and
// jobs that ask for a share of one are packed onto a device that then
// counts as one slot however many of them it runs (see shares.go).
//
// asynq runs one goroutine per task with a fixed concurrency, one per slot,
// so it would start a job in every goroutine it has free: a four-slot job
// holds one goroutine and four slots, and asynq would hand the three idle
// goroutines three more jobs. The book is what stops that. A one-slot
// delivery from a shared queue is admitted only while a slot is free that
// no waiting placed job has reserved; until then its goroutine waits with
// the task, which keeps asynq from fetching more. A delivery held like
// that for seconds is taken back by the controller (HeldDeliveries) and
// given to another worker, so a held task never strands its job. A placed
// delivery (a sized job the controller put on this worker) reserves its
// slots at once and starts when they are free: that reservation is what
// keeps a large job from waiting behind a stream of small ones.
type slotBook struct {
	mu    sync.Mutex
	cond  *sync.Cond
	total int
	// held maps a delivery's key to the slots it holds.
	held map[string]int
	// waiting lists the placed deliveries waiting for slots, oldest first.
	waiting []reservation
	closed  bool
	// takes numbers the slots admitTake holds before it knows for whom;
	// looking lists those it holds now.
	takes   uint64
	looking map[string]bool
	// gpus hands out the worker's GPUs; nil on a worker without them.
	gpus *gpu.Allocator
}

// reservation is a placed delivery waiting for its slots.
type reservation struct {
	key   string
	slots int
}

// errBookClosed is returned to waiters when the worker stops taking work.
var errBookClosed = errors.New("the worker is stopping")

// newSlotBook returns a book of total slots over devs (none: a worker
// without GPUs).
func newSlotBook(total int, devs []gpu.Device) *slotBook {
	b := &slotBook{total: total, held: map[string]int{}, looking: map[string]bool{}}
	if len(devs) > 0 {
		b.gpus = gpu.NewAllocator(devs)
	}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// used is how many slots are held: by their holders, and on a GPU
// worker one per device open to shares; callers hold mu.
func (b *slotBook) used() int {
	n := 0
	for _, k := range b.held {
		n += k
	}
	if b.gpus != nil {
		n += b.gpus.Shared()
	}
	return n
}

// reservedBefore is the slots reserved by waiting deliveries ahead of key
// (all of them when key is not waiting); callers hold mu.
func (b *slotBook) reservedBefore(key string) int {
	n := 0
	for _, r := range b.waiting {
		if r.key == key {
			break
		}
		n += r.slots
	}
	return n
}

// freeShared waits until a slot is free beyond what waiting placed jobs
// reserved, or with rooms set until a device open to shares has room, and
// returns how many such slots are free (perhaps none), with mu held (the
// caller unlocks). It returns early with ctx's error, or errBookClosed,
// with mu released.
func (b *slotBook) freeShared(ctx context.Context, rooms bool) (int, error) {
	stop := context.AfterFunc(ctx, b.wake)
	defer stop()
	b.mu.Lock()
	for {
		switch {
		case b.closed:
			b.mu.Unlock()
			return 0, errBookClosed
		case ctx.Err() != nil:
			b.mu.Unlock()
			return 0, ctx.Err()
		}
		free := b.total - b.used() - b.reservedBefore("")
		if free >= 1 || rooms && b.gpus != nil && len(b.gpus.Rooms()) > 0 {
			return max(free, 0), nil
		}
		b.cond.Wait()
	}
}

// admitShared waits until a slot is free beyond what waiting placed jobs
// reserved, then gives it to key. It returns early with ctx's error, or
// errBookClosed.
func (b *slotBook) admitShared(ctx context.Context, key string) (int, error) {
	if _, err := b.freeShared(ctx, false); err != nil {
		return 0, err
	}
	defer b.mu.Unlock()
	b.held[key] = 1
	return 1, nil
}

// takeHold is what the book holds for one take: whole slots under keys
// of their own and, on a GPU worker, the rooms of the devices open to
// shares, pinned so that they stay open until the take is over.
type takeHold struct {
	keys  []string
	rooms []gpu.Room
}

// admitTake waits until a slot is free beyond what waiting placed jobs
// reserved, or on a GPU worker until a device open to shares has room,
// then holds as many such slots as are free, up to n, and those rooms:
// the taker (taker.go) asks Redis for deliveries that fit them, seats
// each in what it fits (seat) and ends the hold (endTake). It returns
// early with ctx's error, or errBookClosed.
func (b *slotBook) admitTake(ctx context.Context, n int) (takeHold, error) {
	free, err := b.freeShared(ctx, true)
	if err != nil {
		return takeHold{}, err
	}
	defer b.mu.Unlock()
	h := takeHold{keys: make([]string, min(free, n))}
	for i := range h.keys {
		b.takes++
		h.keys[i] = "\x00take:" + strconv.FormatUint(b.takes, 10)
		b.held[h.keys[i]] = 1
		b.looking[h.keys[i]] = true
	}
	if b.gpus != nil {
		h.rooms = b.gpus.Rooms()
		b.gpus.Pin(h.rooms)
	}
	return h, nil
}

// admitPlaced reserves n slots for key and waits until they are free,
// then gives them to key. Every interval (and whenever the book changes)
// it asks still whether the delivery is still worth waiting for: false
// withdraws the reservation and returns (0, nil), so a placement the
// controller took back, or a job cancelled while it waited, frees the
// worker for other work. A job larger than the worker is refused at once.
func (b *slotBook) admitPlaced(ctx context.Context, key string, n int, interval time.Duration, still func() bool) (int, error) {
	if n < 1 {
		n = 1
	}
	if n > b.total {
		return 0, errTooLarge
	}
	stop := context.AfterFunc(ctx, b.wake)
	defer stop()
	// due is set, under b.mu, once interval passed since the last ask:
	// the timer alone measures it, so no clock read can disagree with it.
	due := false
	tick := time.AfterFunc(interval, func() {
		b.mu.Lock()
		due = true
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	defer tick.Stop()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.waiting = append(b.waiting, reservation{key: key, slots: n})
	defer b.unwait(key)
	for {
		switch {
		case b.closed:
			return 0, errBookClosed
		case ctx.Err() != nil:
			return 0, ctx.Err()
		case b.total-b.used()-b.reservedBefore(key) >= n:
			b.held[key] = n
			return n, nil
		}
		if due {
			due = false
			b.mu.Unlock()
			ok := still()
			b.mu.Lock()
			if !ok {
				return 0, nil
			}
			tick.Reset(interval)
			continue
		}
		b.cond.Wait()
	}
}

// errTooLarge refuses a placed job that holds more slots than the worker has.
var errTooLarge = errors.New("the job holds more slots than this worker has")

// unwait removes key's reservation and wakes the others: what it held back
// may now be free for them. Callers hold mu.
func (b *slotBook) unwait(key string) {
	for i, r := range b.waiting {
		if r.key == key {
			b.waiting = append(b.waiting[:i], b.waiting[i+1:]...)
			break
		}
	}
	b.cond.Broadcast()
}

// release frees what key holds, its GPUs too, and wakes the waiters.
func (b *slotBook) release(key string) {
	b.mu.Lock()
	delete(b.held, key)
	delete(b.looking, key)
	if b.gpus != nil {
		b.gpus.Free(key)
	}
	b.cond.Broadcast()
	b.mu.Unlock()
}

// close makes every waiter return errBookClosed: the worker drains.
func (b *slotBook) close() {
	b.mu.Lock()
	b.closed = true
	b.cond.Broadcast()
	b.mu.Unlock()
}

func (b *slotBook) wake() {
	b.mu.Lock()
	b.cond.Broadcast()
	b.mu.Unlock()
}

// busy is how many slots are held or reserved: what the worker reports as
// in use, so the controller never counts a reserved slot as free. A slot
// the taker holds while it looks for work is free: nothing runs in it,
// nor on a device it keeps open for shares that holds none. A device that
// holds shares is busy, however little of it they hold: no whole-GPU job
// may start on it, and the controller places only whole slots.
func (b *slotBook) busy() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	idle := len(b.looking)
	if b.gpus != nil {
		idle += b.gpus.PinnedIdle()
	}
	return min(b.used()-idle+b.reservedBefore(""), b.total)
}
