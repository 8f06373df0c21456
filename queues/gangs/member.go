package gangs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/ballastdev/ballast/internal/retry"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// Member is one gang delivery on one worker: the member's side of the
// protocol from its claim to the start barrier (see doc.go). A worker
// makes one per gang delivery and calls Join; Join gives the member up
// itself whenever it does not start.
type Member struct {
	s     *Store
	d     queues.Delivery
	who   Joiner
	key   string // the member's task ID, for errors
	coord string // member 0's coordinator address
}

// Joiner is the worker a member joins its gang on.
type Joiner struct {
	// Worker and Incarnation claim the member (queues.Store.ClaimAs).
	Worker, Incarnation string
	// StartTimeout is how long the member waits for the rest of its gang
	// before it moves the gang on, unless Held says the rest is coming.
	StartTimeout time.Duration
	// Now is the worker's clock.
	Now func() time.Time
	// Draining reports whether the worker stops taking work: a member
	// waiting then would start past the drain, so the gang moves on.
	Draining func() bool
	Log      *slog.Logger
}

// Member returns member d.Member of gang delivery d (d.Members > 1) on the
// worker who.
func (s *Store) Member(d queues.Delivery, who Joiner) *Member {
	return &Member{s: s, d: d, who: who, key: queues.MemberTaskID(d.JobID, d.Attempt, d.Member)}
}

// Started is a member whose gang runs.
type Started struct {
	// Job is the running record at the member's attempt.
	Job jobs.Job
	// Member and Members are the member's place: its index and the size.
	Member, Members int
	// Coordinator is member 0's host:port.
	Coordinator string
}

// Why a member does not start; the attempt's delivery is of no more use.
var (
	// ErrStale: the attempt moved on or ended before the gang started.
	ErrStale = errors.New("stale delivery")
	// ErrTimeout: the gang did not assemble within StartTimeout with a
	// member no live worker will take, and this member moved it on.
	ErrTimeout = errors.New("the gang did not assemble in time")
	// ErrDraining: the worker began to drain before the gang started, and
	// this member moved it on.
	ErrDraining = errors.New("worker draining")
)

// Join claims the member and waits until every member of its gang is
// claimed, so that no member starts alone. It returns the running record
// and the member's place, or an error: ErrStale, ErrTimeout or ErrDraining
// (wrapped with the member's task ID), queues.ErrFenced (the worker's
// identity is fenced: the member is not claimed), the context's error
// (the worker stops) or Redis trouble. Every error but the claim's leaves
// the member given up (Abandon).
func (m *Member) Join(ctx context.Context) (Started, error) {
	if m.d.Member == 0 {
		var err error
		if m.coord, err = coordinatorAddr(); err != nil {
			return Started{}, fmt.Errorf("choose a coordinator address: %w", err)
		}
	}
	ok, err := m.claim(ctx)
	if err != nil {
		return Started{}, err
	}
	if !ok {
		return Started{}, fmt.Errorf("%s: %w", m.key, ErrStale)
	}
	return m.await(ctx)
}

// claim claims the member, retrying Redis errors briefly: a claim that
// committed but lost its reply leaves the member counted, and the gang
// may start while the delivery backs off; the replay gets the record back.
func (m *Member) claim(ctx context.Context) (bool, error) {
	d := m.d
	for try := 1; ; try++ {
		_, ok, err := m.s.ClaimMember(ctx, d, d.Members, m.who.Worker, m.who.Incarnation, m.coord)
		if err == nil || errors.Is(err, queues.ErrFenced) || try >= claimTries || ctx.Err() != nil {
			return ok, err
		}
		delay := claimBackoff.Delay(try)
		m.who.Log.Warn("gang member claim failed; retrying", "job", d.JobID, "attempt", d.Attempt, "err", err, "in", delay)
		if claimBackoff.Wait(ctx, delay) != nil {
			return ok, err // stopping: the last Redis error stands
		}
	}
}

// await waits at the start barrier of the claimed member's gang (see
// doc.go): started, moved on, the worker draining or stopping, or the
// deadline past with no member on its way.
func (m *Member) await(ctx context.Context) (Started, error) {
	d, log := m.d, m.who.Log
	deadline := m.who.Now().Add(m.who.StartTimeout)
	waitedOn, unconfirmed := false, false
	t := time.NewTicker(Poll)
	defer t.Stop()
	for {
		g, err := m.s.Barrier(ctx, d.JobID, d.Attempt)
		// A failed check changes nothing of what the last one saw.
		if u := g.Unconfirmed != ""; err == nil && u != unconfirmed {
			// Each check of an unconfirmed start waits for the replicas
			// for up to the WAIT's timeout, on a pipeline the worker's
			// other calls share: ask less often until they hold it.
			unconfirmed = u
			poll := Poll
			if u {
				poll = UnconfirmedPoll
				log.Warn("gang started on the Redis master, not yet on its replicas: the member starts once they hold the start",
					"job", d.JobID, "attempt", d.Attempt, "member", d.Member, "wait", g.Unconfirmed)
			}
			t.Reset(poll)
		}
		switch {
		case err != nil:
			log.Warn("gang start check failed", "job", d.JobID, "attempt", d.Attempt, "err", err)
		case g.Started:
			j, err := m.s.record(ctx, d.JobID)
			if err == nil && j.State == jobs.StateRunning && j.Attempt == d.Attempt {
				return Started{Job: j, Member: d.Member, Members: d.Members, Coordinator: g.Coordinator}, nil
			}
			if err == nil {
				// Ended or moved on between the two reads: stale.
				m.giveUp("")
				return Started{}, fmt.Errorf("%s: %w", m.key, ErrStale)
			}
			log.Warn("gang record read failed", "job", d.JobID, "err", err)
		case g.Moved:
			m.giveUp("")
			return Started{}, fmt.Errorf("%s: %w", m.key, ErrStale)
		}
		// A gang started on the master only is no longer the member's to
		// give up: it runs on record, and giving up would leave it
		// without this member.
		started := g.Started || unconfirmed
		if !started && m.who.Draining() {
			m.giveUp("member's worker draining before the gang started")
			return Started{}, ErrDraining
		}
		if m.who.Now().After(deadline) && !started && ctx.Err() == nil {
			// Members whose live workers still have their deliveries are
			// coming as slots free: the reservation doing its job (see
			// Held). Only a definite no ends the wait: a Redis error asks
			// again at the next recheck, and a stopping worker gives the
			// member up below.
			held, err := m.s.Held(ctx, d.JobID, d.Attempt, d.Members)
			if err != nil {
				log.Warn("gang wait check failed; asking again", "job", d.JobID, "attempt", d.Attempt, "err", err)
			}
			if err != nil || held {
				if held && !waitedOn {
					log.Info("gang still assembling: the other members wait for their slots", "job", d.JobID,
						"attempt", d.Attempt, "member", d.Member)
					waitedOn = true
				}
				deadline = m.who.Now().Add(heldRecheck)
				continue
			}
			log.Warn("gang did not assemble in time; moving it on", "job", d.JobID, "attempt", d.Attempt,
				"member", d.Member, "members", d.Members, "waited", m.who.StartTimeout)
			m.giveUp("gang did not assemble within " + m.who.StartTimeout.String())
			return Started{}, fmt.Errorf("%s: %w", m.key, ErrTimeout)
		}
		select {
		case <-ctx.Done():
			// The worker stops: a claimed member must not hold the gang.
			m.giveUp("member's worker stopped before the gang started")
			return Started{}, ctx.Err()
		case <-t.C:
		}
	}
}

// giveUp moves a gang that did not start on (reason given) or only
// unlists it from this worker (reason ""), retrying Redis errors briefly.
func (m *Member) giveUp(reason string) {
	if reason == "" {
		reason = "gang member gave up"
	}
	// Not the claim's context: a member gives up as its worker stops,
	// and the gang must still hear of it.
	for try := 1; try <= giveUpTries; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := m.s.Abandon(ctx, m.d.JobID, m.d.Attempt, m.who.Worker, reason)
		cancel()
		if err == nil {
			return
		}
		m.who.Log.Warn("gang member not given up yet", "job", m.d.JobID, "attempt", m.d.Attempt, "err", err)
		if try < giveUpTries {
			_ = giveUpBackoff.Wait(context.Background(), giveUpBackoff.Delay(try))
		}
	}
}

// heldRecheck is how often a member past its start timeout asks again
// whether the rest of its gang is still on its way.
const heldRecheck = 2 * time.Second

// Retries of a member's claim and give-up: six claims over at most about
// 3 s of waits, five give-ups over at most about 2 s.
const (
	claimTries  = 6
	giveUpTries = 5
)

var (
	claimBackoff  = retry.Backoff{Base: 100 * time.Millisecond, Max: 1600 * time.Millisecond}
	giveUpBackoff = retry.Backoff{Base: 200 * time.Millisecond, Max: 800 * time.Millisecond}
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
