package gangs_test

import (
	"context"
	"time"

	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/usage"
)

// usageIn reads the attempts that ran in [from, until) as the cost
// ledger does (queues/usage): the gang tests check with it what the
// scripts that end an attempt wrote.
func usageIn(ctx context.Context, s *queues.Store, from, until time.Time) ([]usage.AttemptUsage, error) {
	active, err := s.ActiveJobs(ctx)
	if err != nil {
		return nil, err
	}
	return usage.New(s).Usage(ctx, active, from, until)
}
