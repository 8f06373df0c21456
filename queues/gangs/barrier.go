package gangs

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

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

// barrierScript reads what Barrier decides on. A script, not an HMGET, so
// that it can go through Kernel.RunDurable.
// KEYS: job.
var barrierScript = redis.NewScript(`return redis.call("HMGET", KEYS[1], "state", "attempt", "coord")`)

// Barrier reads whether the gang of jobID started at attempt.
//
// The read is durable, as a claim is: with a replica wait configured, a
// gang reads as started only once the replicas hold its start. The start
// is the last member's claim, which that member does not act on until
// the replicas confirm it; without the wait here the other members would
// start on the master's word alone, and a failover that lost the start
// would leave them running a gang that, on record, never started. A WAIT
// after a read covers every write the master made before it (see
// queues/replicated.go), the start among them.
func (s *Store) Barrier(ctx context.Context, jobID string, attempt int) (Barrier, error) {
	r, err := s.k.RunDurable(ctx, barrierScript, []string{s.k.Namespace().Job(jobID)}).Result()
	if answered, ok := queues.NotReplicated(err); ok {
		return Barrier{}, fmt.Errorf("gangs.Barrier %s: %w: the record is on the Redis master, but %s: the member does not start until the replicas hold the gang's start",
			jobID, jobs.ErrUnavailable, answered)
	}
	if err != nil {
		return Barrier{}, queues.Wrap("gangs.Barrier", err)
	}
	v, ok := r.([]any)
	if !ok || len(v) != 3 {
		return Barrier{}, fmt.Errorf("gangs.Barrier %s: the record read back as %T", jobID, r)
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
