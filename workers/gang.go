package workers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/hibiken/asynq"

	"github.com/ballastdev/ballast/internal/retry"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// claimGang claims member d.Member of a gang for identity wid and waits
// until every member is claimed (see queues/gang.go), so that no member
// starts alone. It returns the running record and the member's place, or
// an error asynq acts on: stale (the attempt moved on, or the gang did not
// assemble within Options.GangStartTimeout, with a member no live worker
// will take, and this member moved it on),
// fenced, or Redis trouble.
func (w *Worker) claimGang(ctx context.Context, d queues.Delivery, wid string) (jobs.Job, *gangEnv, error) {
	coord := ""
	if d.Member == 0 {
		var err error
		if coord, err = coordinatorAddr(); err != nil {
			return jobs.Job{}, nil, fmt.Errorf("choose a coordinator address: %w", err)
		}
	}
	key := queues.MemberTaskID(d.JobID, d.Attempt, d.Member)
	// Redis errors are retried here, briefly: a claim that committed but
	// lost its reply leaves the member counted, and the gang may start
	// while asynq backs off; the replay gets the record back.
	var ok bool
	var err error
	for try := 1; ; try++ {
		_, ok, err = w.gang.ClaimMember(ctx, d, d.Members, wid, w.inc, coord)
		if err == nil || errors.Is(err, queues.ErrFenced) || try >= gangClaimTries || ctx.Err() != nil {
			break
		}
		delay := gangClaimBackoff.Delay(try)
		w.log.Warn("gang member claim failed; retrying", "job", d.JobID, "attempt", d.Attempt, "err", err, "in", delay)
		if gangClaimBackoff.Wait(ctx, delay) != nil {
			break // stopping: the last Redis error stands
		}
	}
	if errors.Is(err, queues.ErrFenced) {
		w.refence("claim")
		return jobs.Job{}, nil, err
	}
	if err != nil {
		return jobs.Job{}, nil, err
	}
	if !ok {
		return jobs.Job{}, nil, fmt.Errorf("%w: %s: %w", asynq.RevokeTask, key, errStale)
	}
	deadline := w.opts.Now().Add(w.opts.GangStartTimeout)
	waitedOn := false
	t := time.NewTicker(queues.GangPoll)
	defer t.Stop()
	for {
		g, err := w.gang.GangStarted(ctx, d.JobID, d.Attempt)
		switch {
		case err != nil:
			w.log.Warn("gang start check failed", "job", d.JobID, "attempt", d.Attempt, "err", err)
		case g.Started:
			j, err := w.deliveries.Get(ctx, d.JobID)
			if err == nil && j.State == jobs.StateRunning && j.Attempt == d.Attempt {
				return j, &gangEnv{member: d.Member, members: d.Members, coordinator: g.Coordinator}, nil
			}
			if err == nil {
				// Ended or moved on between the two reads: stale.
				w.giveUpMember(d, wid, "")
				return jobs.Job{}, nil, fmt.Errorf("%w: %s: %w", asynq.RevokeTask, key, errStale)
			}
			w.log.Warn("gang record read failed", "job", d.JobID, "err", err)
		case g.Moved:
			w.giveUpMember(d, wid, "")
			return jobs.Job{}, nil, fmt.Errorf("%w: %s: %w", asynq.RevokeTask, key, errStale)
		}
		w.mu.Lock()
		draining := w.draining
		w.mu.Unlock()
		if draining && !g.Started {
			// The worker stops taking work: a member waiting here would
			// start on a worker past its drain, so the gang moves on.
			w.giveUpMember(d, wid, "member's worker draining before the gang started")
			return jobs.Job{}, nil, fmt.Errorf("worker draining")
		}
		if w.opts.Now().After(deadline) && !g.Started && ctx.Err() == nil {
			// Members whose live workers still have their deliveries
			// are coming as slots free: the reservation doing its job
			// (see queues.GangHeld). Only a definite no ends the wait: a
			// Redis error asks again at the next recheck, and a stopping
			// worker gives the member up below.
			held, err := w.gang.GangHeld(ctx, d.JobID, d.Attempt, d.Members)
			if err != nil {
				w.log.Warn("gang wait check failed; asking again", "job", d.JobID, "attempt", d.Attempt, "err", err)
			}
			if err != nil || held {
				if held && !waitedOn {
					w.log.Info("gang still assembling: the other members wait for their slots", "job", d.JobID,
						"attempt", d.Attempt, "member", d.Member)
					waitedOn = true
				}
				deadline = w.opts.Now().Add(gangHeldRecheck)
				continue
			}
			w.log.Warn("gang did not assemble in time; moving it on", "job", d.JobID, "attempt", d.Attempt,
				"member", d.Member, "members", d.Members, "waited", w.opts.GangStartTimeout)
			w.giveUpMember(d, wid, "gang did not assemble within "+w.opts.GangStartTimeout.String())
			return jobs.Job{}, nil, fmt.Errorf("%w: %s: %w", asynq.RevokeTask, key, errGangTimeout)
		}
		select {
		case <-ctx.Done():
			// The worker stops: a claimed member must not hold the gang.
			w.giveUpMember(d, wid, "member's worker stopped before the gang started")
			return jobs.Job{}, nil, ctx.Err()
		case <-t.C:
		}
	}
}

var errGangTimeout = errors.New("the gang did not assemble in time")

// gangHeldRecheck is how often a member past its start timeout asks again
// whether the rest of its gang is still on its way.
const gangHeldRecheck = 2 * time.Second

// giveUpMember moves a gang that did not start on (reason given) or only
// unlists it from this worker (reason ""), retrying Redis errors briefly.
func (w *Worker) giveUpMember(d queues.Delivery, wid, reason string) {
	if reason == "" {
		reason = "gang member gave up"
	}
	// Not the claim's context: a member gives up as its worker stops,
	// and the gang must still hear of it.
	for try := 1; try <= giveUpTries; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := w.gang.AbandonMember(ctx, d.JobID, d.Attempt, wid, reason)
		cancel()
		if err == nil {
			return
		}
		w.log.Warn("gang member not given up yet", "job", d.JobID, "attempt", d.Attempt, "err", err)
		if try < giveUpTries {
			_ = giveUpBackoff.Wait(context.Background(), giveUpBackoff.Delay(try))
		}
	}
}

// Retries of a gang member's claim and give-up: six claims over at most
// about 3 s of waits, five give-ups over at most about 2 s.
const (
	gangClaimTries = 6
	giveUpTries    = 5
)

var (
	gangClaimBackoff = retry.Backoff{Base: 100 * time.Millisecond, Max: 1600 * time.Millisecond}
	giveUpBackoff    = retry.Backoff{Base: 200 * time.Millisecond, Max: 800 * time.Millisecond}
)

// coordinatorAddr picks host:port for a gang's coordinator on this host:
// the port is free when picked (listened on and closed again), and member
// 0, which runs here, is expected to listen on it.
func coordinatorAddr() (string, error) {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		return "", err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), nil
}
