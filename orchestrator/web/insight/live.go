package insight

import (
	"context"
	"sync"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/advisor"
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
	last      map[string]cachedOverview // by span name
	past      map[string]cachedPast     // by span name
	advice    []advisor.Recommendation
	adviceAt  time.Time
	adviceErr string
	advising  bool
}

type cachedOverview struct {
	o  Overview
	at time.Time
}

type cachedPast struct {
	key      KeyMetrics
	cost     CostView
	problems []string
	at       time.Time
}

// Overview returns an overview no older than MaxAge, with the advice, its
// series over the Source's own span.
func (l *Live) Overview(ctx context.Context) (Overview, error) {
	return l.OverviewSpan(ctx, Span{})
}

// OverviewSpan is Overview with the series over span (a zero Span means
// the Source's own). Each span is cached on its own.
func (l *Live) OverviewSpan(ctx context.Context, span Span) (Overview, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	src := l.Source
	if span.Window > 0 {
		src.SeriesWindow, src.SeriesStep = span.Window, span.Step
	}
	if c, ok := l.last[span.Name]; ok && now.Sub(c.at) < orDefault(l.MaxAge, time.Second) {
		return c.o, nil
	}
	var in Inputs
	if err := src.readCurrent(ctx, &in); err != nil {
		return Overview{At: now}, err
	}
	o, idleNow := src.current(now, in)
	p, ok := l.past[span.Name]
	if !ok || now.Sub(p.at) >= orDefault(l.PastMaxAge, 10*time.Second) {
		if err := src.readPast(ctx, now, &in); err != nil {
			return Overview{At: now}, err
		}
		p.key, p.cost, p.problems = src.past(now, in)
		p.at = now
		if l.past == nil {
			l.past = map[string]cachedPast{}
		}
		l.past[span.Name] = p
	}
	o.Span = src.span().Name
	o.Key, o.Cost = p.key, p.cost
	o.Key.FixedIdleNow = idleNow
	o.Problems = append(o.Problems, p.problems...)
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
	if l.last == nil {
		l.last = map[string]cachedOverview{}
	}
	l.last[span.Name] = cachedOverview{o: o, at: now}
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
