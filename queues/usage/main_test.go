package usage_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/usage"
)

// clock is the stores' clock, moved by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// newStores returns the kernel's store, which the tests drive through
// submissions, claims and ends as workers do, and the usage store on it.
func newStores(t *testing.T) (*queues.Store, *usage.Store, *clock) {
	t.Helper()
	rdb, ns := testenv.Redis(t)
	c := &clock{now: time.Now()}
	s := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns, Now: c.Now})
	return s, usage.New(s), c
}

func spec() jobs.Spec {
	return jobs.Spec{Template: "t", Command: []string{"true"}, Class: jobs.ClassCore, Rhythm: jobs.RhythmPeriodic,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}
}

// attempts reads the usage of [from, until) as the cost ledger does:
// the active jobs first, then the usage entries.
func attempts(ctx context.Context, s *queues.Store, acct *usage.Store, from, until time.Time) ([]usage.AttemptUsage, error) {
	active, err := s.ActiveJobs(ctx)
	if err != nil {
		return nil, err
	}
	return acct.Usage(ctx, active, from, until)
}
