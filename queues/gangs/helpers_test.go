package gangs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/gangs"
)

// gangStore names the embedded gang store apart from the kernel's.
type gangStore = gangs.Store

// store is the kernel's store and the gang store on it: the tests drive a
// gang through both, as the worker does.
type store struct {
	*queues.Store
	*gangStore
}

func storeOn(rdb redis.UniversalClient, opts queues.StoreOptions) *store {
	k := queues.NewStore(rdb, opts)
	return &store{Store: k, gangStore: gangs.New(k)}
}

// clock is the tests' hand-moved clock.
type clock = testenv.Clock

func newStore(t testing.TB) (*store, *clock) {
	t.Helper()
	rdb, ns := testenv.Redis(t)
	c := testenv.NewClock(time.Now())
	return storeOn(rdb, queues.StoreOptions{Namespace: ns, Now: c.Now}), c
}

func spec(key string) jobs.Spec {
	return jobs.Spec{Template: "t", Command: []string{"true"}, Class: jobs.ClassCore, Rhythm: jobs.RhythmPeriodic,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second), IdempotencyKey: key}
}

// placedTasks lists the deliveries waiting in worker's own queue.
func placedTasks(t testing.TB, s *store, worker string) []queues.Delivery {
	t.Helper()
	insp := asynq.NewInspectorFromRedisClient(s.Redis())
	infos, err := insp.ListPendingTasks(s.Namespace().AsynqQueue(queues.PlaceQueue(worker)))
	if err != nil && !errors.Is(err, asynq.ErrQueueNotFound) {
		t.Fatalf("list %s: %v", worker, err)
	}
	var out []queues.Delivery
	for _, ti := range infos {
		d, err := queues.DecodeDelivery(ti.Payload)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// lossyStore is a store whose Redis connection runs through a proxy that
// can lose one reply after Redis carried out the command. go-redis's own
// retries are off, so the test sees the ambiguous error and makes the
// retry itself, as the worker's retry loops do.
type lossyStore struct {
	*store
	proxy *testenv.LossyProxy
	clock *clock
}

func newLossyStore(t *testing.T) lossyStore {
	t.Helper()
	direct, ns := testenv.Redis(t)
	p := testenv.NewLossyProxy(t, direct.Options().Addr)
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	// The kernel's scripts a test loses replies of must have run once
	// before the loss (a gang member's end runs before the last's).
	if err := gangs.LoadScripts(context.Background(), direct); err != nil {
		t.Fatal(err)
	}
	c := testenv.NewClock(time.Now())
	return lossyStore{store: storeOn(rdb, queues.StoreOptions{Namespace: ns, Now: c.Now}), proxy: p, clock: c}
}

// loseNext makes the next command that names job lose its reply, and
// checks afterwards that one was lost.
func (s lossyStore) loseNext(t *testing.T, job string) func() {
	t.Helper()
	s.proxy.LoseNextReply([]byte(job))
	before := s.proxy.Lost()
	return func() {
		t.Helper()
		if s.proxy.Lost() != before+1 {
			t.Fatalf("the proxy lost %d replies, want 1: the test did not hit the command it meant to", s.proxy.Lost()-before)
		}
	}
}
