package workers

import (
	"sync"
	"sync/atomic"
	"time"
)

// carrierIdle is how long a carrier with nothing to do waits for another
// attempt before it ends.
const carrierIdle = 10 * time.Second

// carriers are the goroutines that carry taken attempts to their end,
// kept between attempts. Ending a job takes a deep stack (the finish
// goes through the store's coalescer and the Redis client), and a new
// goroutine starts with a small one that it grows by copying: on a busy
// worker of short jobs that copying was a few percent of the worker's CPU,
// and a kept goroutine pays for it once.
//
// A goroutine that ends an attempt waits up to carrierIdle for the next
// one, then ends; stop ends the waiting ones at once and returns when
// every carrier has ended. Carriers hold no state between attempts.
type carriers struct {
	// work hands an attempt to a waiting carrier; unbuffered, so a send
	// succeeds only when one waits.
	work chan func()
	quit chan struct{}
	all  sync.WaitGroup

	mu      sync.Mutex
	stopped bool

	// started counts the carriers begun (once per carrier, not per attempt).
	started atomic.Int64
}

func newCarriers() *carriers {
	return &carriers{work: make(chan func()), quit: make(chan struct{})}
}

// carry runs f on a waiting carrier, or on a new one when none waits (or
// after stop, so that nothing handed over is ever dropped).
func (c *carriers) carry(f func()) {
	select {
	case c.work <- f:
		return
	default:
	}
	c.mu.Lock()
	stopped := c.stopped
	if !stopped {
		c.all.Add(1)
	}
	c.mu.Unlock()
	if stopped {
		go f()
		return
	}
	c.started.Add(1)
	go c.loop(f)
}

func (c *carriers) loop(f func()) {
	defer c.all.Done()
	idle := time.NewTimer(carrierIdle)
	defer idle.Stop()
	for {
		f()
		f = nil // what it held is not kept alive while waiting
		// Stopped and drained before the reset: under the timer semantics
		// before Go 1.23 (asynctimerchan=1), a timeout that fired during
		// a long attempt would otherwise end the carrier at once.
		if !idle.Stop() {
			select {
			case <-idle.C:
			default:
			}
		}
		idle.Reset(carrierIdle)
		select {
		case f = <-c.work:
		case <-idle.C:
			return
		case <-c.quit:
			return
		}
	}
}

// stop ends the carriers that wait and returns once every carrier has
// ended (those still carrying an attempt end after it).
func (c *carriers) stop() {
	c.mu.Lock()
	if !c.stopped {
		c.stopped = true
		close(c.quit)
	}
	c.mu.Unlock()
	c.all.Wait()
}
