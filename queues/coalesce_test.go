package queues_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// pipelineCounter counts the pipelines of more than one command a client
// sends.
type pipelineCounter struct{ n atomic.Int64 }

func (*pipelineCounter) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (*pipelineCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (p *pipelineCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 1 {
			p.n.Add(1)
		}
		return next(ctx, cmds)
	}
}

// TestCoalescerRunsEachCallOnceAndAnswersItsCaller: concurrent callers each
// get their own script's reply, every script runs exactly once, and calls
// do travel together. The script is new to Redis, so the first round also
// goes through the NOSCRIPT path (run again on its own), and the later
// rounds through pipelined EVALSHA, each caller calling again as soon as
// its reply is in, so senders hand over to each other all the time; at
// the end no pipeline may be counted in flight.
func TestCoalescerRunsEachCallOnceAndAnswersItsCaller(t *testing.T) {
	rdb, ns := testenv.Redis(t)
	pc := &pipelineCounter{}
	rdb.AddHook(pc)
	// A body no other test loads, so its SHA is unknown at first.
	script := redis.NewScript(fmt.Sprintf("-- %s\nreturn {redis.call('INCR', KEYS[1]), ARGV[1]}", testenv.RandomHex(8)))
	c := queues.NewCoalescer(rdb)
	const callers = 64
	const rounds = 8
	for round := 1; round <= rounds; round++ {
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, callers)
		for i := range callers {
			wg.Go(func() {
				if round == 1 {
					<-start
				}
				key := fmt.Sprintf("{%s}:co:%d", ns, i)
				v, err := c.Run(context.Background(), script, []string{key}, i).Slice()
				if err != nil {
					errs <- fmt.Errorf("round %d caller %d: %w", round, i, err)
					return
				}
				if n, _ := v[0].(int64); n != int64(round) {
					errs <- fmt.Errorf("round %d caller %d: counter %d, want %d (a script ran twice or not at all)", round, i, n, round)
				}
				if got, _ := v[1].(string); got != fmt.Sprint(i) {
					errs <- fmt.Errorf("round %d caller %d got caller %s's reply", round, i, got)
				}
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
	if pc.n.Load() == 0 {
		t.Errorf("%d concurrent callers %d times over sent no pipeline: nothing was coalesced", callers, rounds)
	}
	if inFlight, queued := c.State(); inFlight > 0 || queued > 0 {
		t.Errorf("after every call returned: %d in flight, %d queued; want idle", inFlight, queued)
	}
}

// TestCoalescerCallerGivesUpBeforeItsCallIsSent: a caller whose context
// ends while its call still waits for the pipeline in flight leaves with
// the context's error, and its script never runs.
func TestCoalescerCallerGivesUpBeforeItsCallIsSent(t *testing.T) {
	rdb, ns := testenv.Redis(t)
	script := redis.NewScript("return redis.call('INCR', KEYS[1])")
	c := queues.NewCoalescer(rdb)
	c.PretendSending()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	key := "{" + ns + "}:co:given-up"
	err := c.Run(ctx, script, []string{key}).Err()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("run = %v; want the context's deadline", err)
	}
	if _, queued := c.State(); queued != 0 {
		t.Fatalf("%d calls left queued; want the given-up call gone", queued)
	}
	if n, err := rdb.Exists(context.Background(), key).Result(); err != nil || n != 0 {
		t.Fatalf("the given-up script ran (exists %d, %v)", n, err)
	}
}

// TestClaimForACallerThatGaveUpChangesNothing: a claim whose context has
// ended is not sent, so the job stays queued for a caller that can run it.
func TestClaimForACallerThatGaveUpChangesNothing(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	sub, err := s.Submit(context.Background(), spec(""), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok, err := s.ClaimBy(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, queues.Claimant{Worker: "w1", Incarnation: "i1"}); ok || err == nil {
		t.Fatalf("claim with an ended context: ok=%v err=%v; want an error", ok, err)
	}
	j, err := s.Get(context.Background(), sub.Job.ID)
	if err != nil || j.State != jobs.StateQueued || j.Worker != "" {
		t.Fatalf("after the refused claim: %s on %q (%v); want queued on no worker", j.State, j.Worker, err)
	}
}
