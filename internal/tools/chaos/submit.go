package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/retry"
	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// planned is one job the run will submit: its idempotency key and the
// seconds of work it does.
type planned struct {
	key     string
	seconds float64
}

// planJobs draws the jobs' work from the run's seed.
func planJobs(o Options, rng *rand.Rand) []planned {
	out := make([]planned, o.Jobs)
	span := o.MaxWork - o.MinWork
	for i := range out {
		d := o.MinWork
		if span > 0 {
			d += time.Duration(rng.Int64N(int64(span) + 1))
		}
		// Milliseconds, so the parameter reads cleanly in job logs, kept
		// inside the template's bounds.
		ms := min(max(d.Round(time.Millisecond), o.MinWork), o.MaxWork)
		out[i] = planned{key: fmt.Sprintf("chaos-%d-%d", o.Seed, i), seconds: ms.Seconds()}
	}
	return out
}

// submitted is what the submitters got back.
type submitted struct {
	mu sync.Mutex
	// ids maps each accepted key to its job.
	ids map[string]string
	// retries counts tries repeated with the same key after a lost or
	// refused-as-unavailable reply; duplicates, the retries the intake
	// answered "duplicate" (the first try had been recorded).
	retries, duplicates int
	// refused holds keys given up on, with the last error.
	refused map[string]string
}

func newSubmitted() *submitted {
	return &submitted{ids: map[string]string{}, refused: map[string]string{}}
}

func (s *submitted) accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ids)
}

// submitAll submits every planned job from clients concurrent NATS
// connections, pacing job i to no earlier than start+i*spread/len(plan)
// while paced lasts, so the faults meet a steady flow, and retrying a try
// whose reply was lost with the same idempotency key until ctx ends.
func (s *submitted) submitAll(ctx, paced context.Context, cfg config.Config, plan []planned, clients int, start time.Time, spread time.Duration) error {
	opts, err := cfg.NATS.Options()
	if err != nil {
		return err
	}
	conns := make([]*nats.Conn, clients)
	for i := range conns {
		nc, err := nats.Connect(cfg.NATS.URL, append(opts, nats.Name("ballast-chaos-submit-"+strconv.Itoa(i)))...)
		if err != nil {
			for _, c := range conns[:i] {
				c.Close()
			}
			return fmt.Errorf("submitter %d: %w", i, err)
		}
		conns[i] = nc
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	subj := events.Subjects{Prefix: cfg.NATS.SubjectPrefix}
	var wg sync.WaitGroup
	for ci, nc := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := client.NewNATS(nc, subj)
			// The run retries itself, so that every retry is counted and
			// keeps the key for as long as the run lasts.
			c.Options = client.Options{Retries: -1, Timeout: 3 * time.Second}
			for i := ci; i < len(plan); i += clients {
				at := start.Add(time.Duration(int64(spread) * int64(i) / int64(len(plan))))
				sleepUntil(paced, at)
				if ctx.Err() != nil {
					return
				}
				s.one(ctx, c, plan[i])
			}
		}()
	}
	wg.Wait()
	return nil
}

// one submits p until it is accepted, refused for good, or ctx ends.
func (s *submitted) one(ctx context.Context, c *client.NATS, p planned) {
	sub := jobs.Submission{Template: templateName, IdempotencyKey: p.key,
		Params: map[string]json.RawMessage{"seconds": json.RawMessage(strconv.FormatFloat(p.seconds, 'f', 3, 64))}}
	// Jittered, so the submitters cut off by one fault do not all come
	// back at the same instant.
	bo := retry.Backoff{Base: 100 * time.Millisecond, Max: 2 * time.Second}
	for try := 1; ; try++ {
		r, err := c.Submit(ctx, sub)
		if err == nil {
			s.mu.Lock()
			s.ids[p.key] = r.JobID
			if try > 1 && r.Duplicate {
				s.duplicates++
			}
			s.mu.Unlock()
			return
		}
		var ce *client.Error
		if errors.As(err, &ce) && ce.Code != intake.CodeUnavailable && ce.Code != intake.CodeInternal {
			// Invalid, conflicting or unauthorized: the answer will not change.
			s.refuse(p.key, err)
			return
		}
		if ctx.Err() != nil {
			s.refuse(p.key, err)
			return
		}
		s.mu.Lock()
		s.retries++
		s.mu.Unlock()
		if bo.Wait(ctx, bo.Delay(try)) != nil {
			s.refuse(p.key, err)
			return
		}
	}
}

func (s *submitted) refuse(key string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refused[key] = err.Error()
}

// sleepUntil waits until t or ctx's end; it reports whether t came.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}
