package insight

import (
	"context"
	"sync"
	"time"

	"github.com/ballastdev/ballast/orchestrator/advisor"
)

// Live serves overviews to many readers (dashboard streams, API calls,
// `ballast top`) without reading the store once per reader: an overview is
// rebuilt at most once per MaxAge, and the advice, which reads a day of job
// history, at most once per AdviceMaxAge.
type Live struct {
	Source Source
	// MaxAge defaults to one second, AdviceMaxAge to one minute.
	MaxAge, AdviceMaxAge time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu       sync.Mutex
	last     Overview
	lastAt   time.Time
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
	o, err := l.Source.Overview(ctx, now)
	if err != nil {
		return o, err
	}
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
