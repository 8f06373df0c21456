package gangs

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// Barrier is what a claimed member waits on: the gang's start.
type Barrier struct {
	// Started: the gang runs at the member's attempt.
	Started bool
	// Moved: the attempt is over (moved on, ended, or the record is gone);
	// the member must not start.
	Moved bool
	// Coordinator is member 0's address, once started.
	Coordinator string
}

// Barrier reads whether the gang of jobID started at attempt.
func (s *Store) Barrier(ctx context.Context, jobID string, attempt int) (Barrier, error) {
	v, err := s.k.Redis().HMGet(ctx, s.k.Namespace().Job(jobID), "state", "attempt", "coord").Result()
	if err != nil {
		return Barrier{}, queues.Wrap("gangs.Barrier", err)
	}
	st, _ := v[0].(string)
	a, _ := v[1].(string)
	coord, _ := v[2].(string)
	if n, _ := strconv.Atoi(a); st == "" || n != attempt || (st != string(jobs.StateQueued) && st != string(jobs.StateRunning)) {
		return Barrier{Moved: true}, nil
	}
	c, ok := strings.CutPrefix(coord, strconv.Itoa(attempt)+"|")
	if st == string(jobs.StateRunning) && ok && c != "" {
		return Barrier{Started: true, Coordinator: c}, nil
	}
	return Barrier{}, nil
}

// record reads job id's record, as the kernel's Get does: the member that
// passed the barrier starts from the running record, which its claim (made
// while the gang assembled) did not return.
func (s *Store) record(ctx context.Context, id string) (jobs.Job, error) {
	h, err := s.k.Redis().HGetAll(ctx, s.k.Namespace().Job(id)).Result()
	if err != nil {
		return jobs.Job{}, queues.Wrap("gangs.record", err)
	}
	if len(h) == 0 {
		return jobs.Job{}, fmt.Errorf("gangs.record %q: %w", id, jobs.ErrNotFound)
	}
	return queues.DecodeRecord(id, h)
}
