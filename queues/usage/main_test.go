package usage_test

import (
	"context"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/usage"
)

// clock is the tests' hand-moved clock.
type clock = testenv.Clock

// newStores returns the kernel's store, which the tests drive through
// submissions, claims and ends as workers do, and the usage store on it.
func newStores(t *testing.T) (*queues.Store, *usage.Store, *clock) {
	t.Helper()
	rdb, ns := testenv.Redis(t)
	c := testenv.NewClock(time.Now())
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
