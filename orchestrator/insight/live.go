package insight

import (
	"context"
	"sync"
	"time"

	"github.com/ballastdev/ballast/orchestrator/advisor"
)

// Live serves overviews to many readers (dashboard streams, API calls,
// `ballast top`) without reading the store once per reader: an overview is
// rebuilt at most once per MaxAge; its history (the key measures over time
// and today's cost, from a day of usage records) at most once per
// PastMaxAge; and the advice, which reads a day of job history, at most
// once per AdviceMaxAge. Running jobs, pools and queues are therefore
// always fresh, and a busy day costs one read of its records per
// PastMaxAge, not per refresh.
type Live struct {
	Source Source
	// MaxAge defaults to one second, PastMaxAge to ten seconds and
	// AdviceMaxAge to one minute.
	MaxAge, PastMaxAge, AdviceMaxAge time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu        sync.Mutex
	last      Overview
	lastAt    time.Time
	key       KeyMetrics
	cost      CostView
	problems  []string
	pastAt    time.Time
	advice    []advisor.Recommendation
	adviceAt  time.Time
	adviceErr string
	advising  bool
}

// Overview returns an overview no older than MaxAge, with the advice.
func (l *Live) Overview(ctx context.Context) (Overview, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if !l.lastAt.IsZero() && now.Sub(l.lastAt) < orDefault(l.MaxAge, time.Second) {
		return l.last, nil
	}
	var in Inputs
	if err := l.Source.readCurrent(ctx, &in); err != nil {
		return Overview{At: now}, err
	}
	o, idleNow := l.Source.current(now, in)
	if l.pastAt.IsZero() || now.Sub(l.pastAt) >= orDefault(l.PastMaxAge, 10*time.Second) {
		if err := l.Source.readPast(ctx, now, &in); err != nil {
			return Overview{At: now}, err
		}
		l.key, l.cost, l.problems = l.Source.past(now, in)
		l.pastAt = now
	}
	o.Key, o.Cost = l.key, l.cost
	o.Key.FixedIdleNow = idleNow
	o.Problems = append(o.Problems, l.problems...)
	switch {
	case l.adviceAt.IsZero():
		// The first advice is worked out here, so the first reader (and a
		// one-shot `ballast top`) gets it.
		l.mu.Unlock()
		recs, err := l.Source.adviseNow(ctx, now)
		l.mu.Lock()
		l.setAdvice(now, recs, err)
	case now.Sub(l.adviceAt) >= orDefault(l.AdviceMaxAge, time.Minute) && !l.advising:
		// Later ones in the background: a day of job history must not
		// hold every reader, the stream included, while it is read.
		l.advising = true
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			recs, err := l.Source.adviseNow(ctx, now)
			l.mu.Lock()
			defer l.mu.Unlock()
			l.advising = false
			l.setAdvice(now, recs, err)
		}()
	}
	if l.adviceErr != "" {
		o.Problems = append(o.Problems, "advice: "+l.adviceErr)
	}
	if l.advice != nil {
		o.Recommendations = l.advice
	}
	l.last, l.lastAt = o, now
	return o, nil
}

// setAdvice keeps the advice worked out at now; after an error the last
// good advice stays, with the error shown, until the next try at pace.
func (l *Live) setAdvice(now time.Time, recs []advisor.Recommendation, err error) {
	l.adviceAt = now
	if err != nil {
		l.adviceErr = err.Error()
		return
	}
	l.advice, l.adviceErr = recs, ""
}

// adviseNow is the advice over the advice window ending at now.
func (s Source) adviseNow(ctx context.Context, now time.Time) ([]advisor.Recommendation, error) {
	_, recs, err := s.Advise(ctx, now.Add(-s.adviceWindow()), now)
	return recs, err
}

func (l *Live) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}
