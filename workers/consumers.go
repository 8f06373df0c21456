package workers

import (
	"time"

	"github.com/hibiken/asynq"

	"github.com/ballastdev/ballast/queues"
)

// consumers are the asynq servers a worker takes deliveries from: one for
// the shared queues it serves, in strict priority, and one for its own
// placement queue.
//
// asynq looks in a server's queues one at a time, one round trip each,
// until one yields a task. With the placement queue in the same server,
// ahead of the shared ones (a job placed here has slots held for it, so it
// must not wait behind them), every shared job cost a second round trip to
// find that queue empty, on the worker and on Redis alike. Placed jobs are
// rare, shared ones are the stream: their own server looks at the
// placement queue every placePoll whatever the load, and a placed
// delivery no longer waits for a goroutine of the shared server to free.
// The slot book (slots.go) keeps the two from ever running more than the
// worker's slots: a placed delivery reserves its slots at once, and a
// shared one waits for a slot nobody reserved.
//
// What it costs, in round trips to Redis per worker: an idle worker looks
// in each shared queue every poll interval as before, and in its own
// queue every placePoll (10 a second at the defaults, where one server
// looked every poll interval, 40); a worker with every slot busy still
// looks in its own queue every placePoll (one server did not look at all,
// having no goroutine free); a worker draining a stream of jobs makes one
// dequeue per job instead of two. And a busy server's free goroutine may
// take a shared delivery while placed jobs hold the slots it would need:
// it waits, held, and the controller gives it to another worker after a
// few seconds (see HeldDeliveries), as one server did with the goroutines
// a multi-slot placed job left free.
//
// Where the store allows it, the shared queues have no asynq server: the
// taker (taker.go) pops and claims their deliveries in one script.
type consumers struct {
	// shared is nil when taker serves the shared queues.
	shared, placed *asynq.Server
	taker          *taker
}

// placePoll is how often a worker looks in its own placement queue: less
// often than in the shared ones, since a placed job is a large one, for
// which a tenth of a second more to start is nothing, and this look is
// the one a busy worker keeps making.
func placePoll(poll time.Duration) time.Duration { return max(poll, 100*time.Millisecond) }

// newConsumers builds the worker's servers; nothing runs until start.
func (w *Worker) newConsumers() *consumers {
	ns := w.registry.Namespace()
	prio := map[string]int{}
	for i, q := range w.opts.Queues {
		prio[ns.AsynqQueue(q)] = len(w.opts.Queues) - i
	}
	config := func(queues map[string]int, poll time.Duration) asynq.Config {
		var grace time.Duration = 15 * time.Minute // the largest grace a template may have
		return asynq.Config{
			Concurrency:       w.opts.Slots,
			Queues:            queues,
			StrictPriority:    true,
			TaskCheckInterval: poll,
			// Retries are scheduled tasks; asynq looks for due ones every 5s by
			// default, which would stretch a short back-off to seconds.
			DelayedTaskCheckInterval: forwardEvery(w.opts.RetryBackoff),
			// Our own drain runs first; asynq's shutdown only has to outlast it.
			ShutdownTimeout: w.opts.DrainTimeout + grace + 30*time.Second,
			Logger:          asynqLogger{w.log},
			LogLevel:        asynq.WarnLevel,
			// Infrastructure redeliveries (Redis down mid-claim) back off quickly.
			RetryDelayFunc: func(n int, _ error, _ *asynq.Task) time.Duration {
				return min(time.Duration(n+1)*time.Second, 30*time.Second)
			},
		}
	}
	c := &consumers{placed: asynq.NewServerFromRedisClient(w.deliveries.Redis(),
		config(map[string]int{ns.AsynqQueue(queues.PlaceQueue(w.opts.ID)): 1}, placePoll(w.opts.PollInterval)))}
	if w.deliveries.CanTake() && !w.opts.AsynqShared {
		c.taker = &taker{w: w, carriers: newCarriers()}
	} else {
		c.shared = asynq.NewServerFromRedisClient(w.deliveries.Redis(), config(prio, w.opts.PollInterval))
	}
	return c
}

// start starts both servers, or neither.
func (c *consumers) start(h asynq.Handler) error {
	if err := c.placed.Start(h); err != nil {
		return err
	}
	if c.taker != nil {
		c.taker.start()
		return nil
	}
	if err := c.shared.Start(h); err != nil {
		c.placed.Shutdown()
		return err
	}
	return nil
}

// Stop makes both servers stop fetching deliveries; running ones go on.
func (c *consumers) Stop() {
	if c.taker != nil {
		c.taker.stop()
	} else {
		c.shared.Stop()
	}
	c.placed.Stop()
}

// Shutdown waits for both servers' handlers to return and stops them.
func (c *consumers) Shutdown() {
	if c.taker != nil {
		c.taker.wait()
	} else {
		c.shared.Shutdown()
	}
	c.placed.Shutdown()
}
