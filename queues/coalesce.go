package queues

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A worker's slots claim and finish jobs concurrently, and an intake
// records concurrent submissions, each with one script. Sent one by one,
// every script is a round trip, and on a busy worker or intake the round
// trips (two system calls on each side) cost more CPU than the scripts.
// The coalescer sends the scripts of concurrent callers in one pipeline: a
// group commit. A caller that finds fewer than maxInFlight pipelines on
// their way sends its own at once, so an idle worker waits for nothing;
// the calls that arrive meanwhile go together in the next one, sent by one
// of their callers. Each script is still atomic on its own and its reply
// reaches only its caller: a pipeline changes how the scripts travel,
// never what they do. Nothing runs in the background, so a Store leaves no
// goroutine behind.

// maxCoalesced bounds one pipeline, so a burst of calls cannot build a
// reply large enough to stall the connection.
const maxCoalesced = 128

// maxInFlight is how many pipelines may be on their way at once. One would
// make the coalescer a queue of its own: every call would wait for the
// round trip before it even when Redis has time to spare. A few keep
// Redis and the callers busy at once while calls still gather.
const maxInFlight = 2

type coalescer struct {
	rdb redis.UniversalClient
	// wait ends each pipeline that holds a durable call (see
	// replicated.go).
	wait replicaWait

	mu       sync.Mutex
	queue    []*scriptCall
	inFlight int // pipelines being sent, at most maxInFlight
}

// scriptCall is one caller's script in the coalescer.
type scriptCall struct {
	ctx    context.Context
	script *redis.Script
	keys   []string
	args   []any

	// durable calls count as done only once c.wait's replicas hold
	// their writes.
	durable bool

	cmd  *redis.Cmd
	done chan struct{} // closed once cmd holds the reply
	// lead tells a waiting caller that it sends the next pipeline.
	lead chan struct{}
	// taken is set, under the coalescer's lock, once a sender holds it.
	taken bool
}

// run runs script like script.Run, coalesced with concurrent calls.
func (c *coalescer) run(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	return c.call(ctx, &scriptCall{script: script, keys: keys, args: args})
}

// runDurable is run for a call whose writes are acknowledged to someone
// outside (a submission) or acted on outside Redis (a claim, on which a
// worker starts a process), or whose read is acted on so (a gang's start):
// with a replica wait configured, its reply comes with an error unless
// the replicas hold every write the master made before it.
func (c *coalescer) runDurable(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	return c.call(ctx, &scriptCall{script: script, keys: keys, args: args, durable: true})
}

func (c *coalescer) call(ctx context.Context, call *scriptCall) *redis.Cmd {
	// A caller that has already given up sends nothing, as script.Run
	// would not: a claim must not commit for a caller that cannot run it.
	if err := ctx.Err(); err != nil {
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(err)
		return cmd
	}
	call.ctx, call.done, call.lead = ctx, make(chan struct{}), make(chan struct{}, 1)
	c.mu.Lock()
	if c.inFlight >= maxInFlight {
		c.queue = append(c.queue, call)
		c.mu.Unlock()
		select {
		case <-call.done:
			return call.cmd
		case <-call.lead:
		case <-ctx.Done():
			c.mu.Lock()
			if !call.taken && c.drop(call) {
				c.mu.Unlock()
				cmd := redis.NewCmd(ctx)
				cmd.SetErr(ctx.Err())
				return cmd
			}
			c.mu.Unlock()
			// A sender holds it (or just chose it to send next): the
			// script may run, so its reply must be waited for.
			select {
			case <-call.done:
				return call.cmd
			case <-call.lead:
			}
		}
		c.mu.Lock()
	} else {
		c.inFlight++
	}
	// This caller sends its own call and the calls waiting, in one
	// pipeline. A caller chosen to send next was taken off the queue, so
	// no call is ever in two pipelines and no caller leads twice.
	n := min(len(c.queue), maxCoalesced-1)
	batch := make([]*scriptCall, 0, n+1)
	batch = append(batch, call)
	batch = append(batch, c.queue[:n]...)
	c.queue = c.queue[n:]
	for _, b := range batch {
		b.taken = true
	}
	c.mu.Unlock()

	c.send(batch)

	c.mu.Lock()
	if len(c.queue) > 0 {
		// Hand over to a waiting caller rather than send on: this one's
		// reply is in, and its job should not wait on others' round trips.
		next := c.queue[0]
		c.queue = c.queue[1:]
		next.taken = true
		next.lead <- struct{}{}
	} else {
		c.inFlight--
	}
	c.mu.Unlock()
	return call.cmd
}

// pipelineContext is the context one pipeline serves its calls under: no
// caller's cancellation cuts the others' scripts short, and the pipeline
// ends by the latest of their deadlines, or by the client's own timeouts
// when a caller set none.
func pipelineContext(batch []*scriptCall) (context.Context, context.CancelFunc) {
	ctx := context.WithoutCancel(batch[0].ctx)
	var latest time.Time
	for _, b := range batch {
		d, ok := b.ctx.Deadline()
		if !ok {
			return ctx, func() {}
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(ctx, latest)
}

// drop removes call from the queue, reporting whether it was there.
func (c *coalescer) drop(call *scriptCall) bool {
	for i, q := range c.queue {
		if q == call {
			c.queue = append(c.queue[:i], c.queue[i+1:]...)
			return true
		}
	}
	return false
}

// send runs batch in one pipeline and hands each call its reply. Scripts
// run by SHA; a Redis that does not hold one (restarted, flushed) answers
// NOSCRIPT without running it, so those calls run once more, each on its
// own, by script.Run, which loads the script: nothing runs twice.
func (c *coalescer) send(batch []*scriptCall) {
	ctx, cancel := pipelineContext(batch)
	defer cancel()
	if c.wait.replicas > 0 && slices.ContainsFunc(batch, func(b *scriptCall) bool { return b.durable }) {
		// The durable calls go in a pipeline of their own, beside the
		// others: a finish or a beat must not wait for the replicas of a
		// submission or a claim it happened to travel with.
		var durable, rest []*scriptCall
		for _, b := range batch {
			if b.durable {
				durable = append(durable, b)
			} else {
				rest = append(rest, b)
			}
		}
		var wg sync.WaitGroup
		if len(rest) > 0 {
			wg.Go(func() { c.send(rest) })
		}
		c.sendWaiting(ctx, durable)
		wg.Wait()
		return
	}
	if len(batch) == 1 {
		b := batch[0]
		b.cmd = b.script.Run(ctx, c.rdb, b.keys, b.args...)
		close(b.done)
		return
	}
	cmds := make([]*redis.Cmd, len(batch))
	_, _ = c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, b := range batch {
			cmds[i] = b.script.EvalSha(ctx, p, b.keys, b.args...)
		}
		return nil
	})
	for i, b := range batch {
		if err := cmds[i].Err(); err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
			cmds[i] = b.script.Run(ctx, c.rdb, b.keys, b.args...)
		}
		b.cmd = cmds[i]
		close(b.done)
	}
}

// sendWaiting is send for durable calls: the pipeline ends with the
// replication mark and the WAIT, so it counts the replicas of every write
// the master made before it (see replicaWait.add). Calls whose script Redis did not hold are sent
// again in a second pipeline, with its own WAIT, once their scripts are
// loaded.
func (c *coalescer) sendWaiting(ctx context.Context, batch []*scriptCall) {
	// Every durable call (a submission, a claim, a gang's barrier) has
	// its keys in its namespace's slot.
	rdb, err := c.wait.client(ctx, c.rdb, batch[0].keys[0])
	if err != nil {
		for _, b := range batch {
			b.cmd = redis.NewCmd(ctx)
			b.cmd.SetErr(err)
			close(b.done)
		}
		return
	}
	todo := batch
	for round := 0; round < 2 && len(todo) > 0; round++ {
		cmds := make([]*redis.Cmd, len(todo))
		var wait *redis.IntCmd
		_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, b := range todo {
				cmds[i] = b.script.EvalSha(ctx, p, b.keys, b.args...)
			}
			wait = c.wait.add(ctx, p)
			return nil
		})
		unconfirmed := c.wait.check(wait)
		var again []*scriptCall
		for i, b := range todo {
			err := cmds[i].Err()
			if round == 0 && err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
				lerr := b.script.Load(ctx, rdb).Err()
				if lerr == nil {
					again = append(again, b)
					continue
				}
				// The script never ran: say why it could not be loaded.
				cmds[i].SetErr(lerr)
			}
			switch {
			case err == nil && unconfirmed != nil:
				cmds[i].SetErr(unconfirmed)
			case err != nil:
				if m := c.wait.moved(ctx, c.rdb, cmds[i].Err()); m != cmds[i].Err() {
					cmds[i].SetErr(m)
				}
			}
			b.cmd = cmds[i]
			close(b.done)
		}
		todo = again
	}
}

// runScript runs script for one caller, in a pipeline with the scripts of
// concurrent callers (see coalescer).
func (s *Store) runScript(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	return s.co.run(ctx, script, keys, args...)
}
