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

	mu       sync.Mutex
	last     Overview
	lastAt   time.Time
	key      KeyMetrics
	cost     CostView
	problems []string
	pastAt   time.Time
	advice   []advisor.Recommendation
	adviceAt time.Time
	adviceOK bool
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
	if !l.adviceOK || now.Sub(l.adviceAt) >= orDefault(l.AdviceMaxAge, time.Minute) {
		_, recs, err := l.Source.Advise(ctx, now.Add(-l.Source.adviceWindow()), now)
		if err != nil {
			o.Problems = append(o.Problems, "advice: "+err.Error())
		} else {
			l.advice, l.adviceAt, l.adviceOK = recs, now, true
		}
	}
	if l.advice != nil {
		o.Recommendations = l.advice
	}
	l.last, l.lastAt = o, now
	return o, nil
}

func (l *Live) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}
