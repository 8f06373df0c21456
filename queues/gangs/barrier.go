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
	// Unconfirmed, when not empty, says the gang started on the Redis
	// master but the replicas asked for (redis.wait_replicas) do not hold
	// the start yet, and what their WAIT answered. Started is false: the
	// member waits, and does not give the gang up, since on the master it
	// runs.
	Unconfirmed string
}

// barrierScript reads what Barrier decides on. A script, not an HMGET, so
// that it can go through Kernel.RunDurable.
// KEYS: job.
var barrierScript = redis.NewScript(`return redis.call("HMGET", KEYS[1], "state", "attempt", "coord")`)

// Barrier reads whether the gang of jobID started at attempt.
//
// A start it reports is durable, as a claim is: with a replica wait
// configured, a gang reads as started only once the replicas hold its
// start. The start is the last member's claim, which that member does not
// act on until the replicas confirm it; without the wait here the other
// members would start on the master's word alone, and a failover that
// lost the start would leave them running a gang that, on record, never
// started. The WAIT covers every write the master made before it, the
// start among them (see queues/replicated.go).
//
// Only a start is waited for, and only with a replica wait configured. A
// member polls its barrier every Poll while the gang assembles, and a
// read that finds no start is not acted on, so it goes without a WAIT:
// the replicas' round trip, and in an outage their timeout, is paid once
// a start is seen, not on every poll; and without replicas to wait for,
// the first read is the answer.
func (s *Store) Barrier(ctx context.Context, jobID string, attempt int) (Barrier, error) {
	keys := []string{s.k.Namespace().Job(jobID)}
	r, err := s.k.Run(ctx, barrierScript, keys).Result()
	if err != nil {
		return Barrier{}, queues.Wrap("gangs.Barrier", err)
	}
	b, err := readBarrier(jobID, attempt, r)
	if err != nil || !b.Started || !s.k.WaitsForReplicas() {
		return b, err
	}
	r, err = s.k.RunDurable(ctx, barrierScript, keys).Result()
	// A WAIT that fell short leaves the read's reply in place.
	unconfirmed, short := queues.NotReplicated(err)
	if err != nil && !short {
		return Barrier{}, queues.Wrap("gangs.Barrier", err)
	}
	if b, err = readBarrier(jobID, attempt, r); err == nil && b.Started && short {
		return Barrier{Unconfirmed: unconfirmed}, nil
	}
	return b, err
}

// readBarrier decodes barrierScript's reply for the member of attempt.
func readBarrier(jobID string, attempt int, r any) (Barrier, error) {
	v, ok := r.([]any)
	if !ok || len(v) != 3 {
		return Barrier{}, fmt.Errorf("gangs.Barrier %s: the record read back as %T", jobID, r)
	}
	st, _ := v[0].(string)
	a, _ := v[1].(string)
	coord, _ := v[2].(string)
	if n, _ := strconv.Atoi(a); st == "" || n != attempt || (st != string(jobs.StateQueued) && st != string(jobs.StateRunning)) {
		// Not acted on beyond giving the member up, which a failover
		// that lost the move leaves to the gang's redelivery.
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
