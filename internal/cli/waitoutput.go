package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/queues/logs"
)

// outputPoll is how often `--wait` reads new lines of the job's output: a
// line shows up within it, and a waiting terminal costs Redis two small
// reads a second.
const outputPoll = 500 * time.Millisecond

// outputTail prints a followed job's stdout as it is written, between the
// event lines, so that `submit --wait` shows what the job printed the way
// running it by hand would. Its stderr is not streamed: a failure prints
// its tail once, at the end (waitResult). The output is read from the
// job's log in Redis; a submitter that reaches only NATS is told where to
// read it instead.
type outputTail struct {
	e     *env
	logs  *logs.Store
	close func()
	id    string
	after string // the last log entry printed
}

// newOutputTail connects to the config's Redis for the job's output; when
// it cannot, it says so and returns a tail that prints nothing.
func newOutputTail(ctx context.Context, e *env, cfg config.Config, id string) *outputTail {
	t := &outputTail{e: e, id: id, close: func() {}}
	store, closeFn, err := storeFor(ctx, cfg)
	if err != nil {
		fmt.Fprintf(e.errOut, "the job's output is not shown here (%v); read it with: ballast jobs logs %s\n", err, id)
		return t
	}
	t.logs, t.close = logs.New(store), closeFn
	return t
}

// pump prints the stdout lines written since the last call. A failed read
// is skipped: the next poll reads from the same place, and the job's end
// does not depend on its output.
func (t *outputTail) pump(ctx context.Context) {
	if t == nil || t.logs == nil {
		return
	}
	for {
		rctx, cancel := context.WithTimeout(ctx, outputPoll)
		lines, err := t.logs.Logs(rctx, t.id, t.after, 1000)
		cancel()
		if err != nil {
			return
		}
		for _, l := range lines {
			t.after = l.ID
			if l.Stream == "stdout" {
				fmt.Fprintf(t.e.out, "  | %s\n", l.Text)
			}
		}
		if len(lines) < 1000 {
			return
		}
	}
}

// Close releases the Redis connection.
func (t *outputTail) Close() {
	if t != nil {
		t.close()
	}
}
