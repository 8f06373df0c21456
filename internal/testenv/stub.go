package testenv

import (
	"context"
	"sync"
)

// Stub stands in for an interface method taking In and returning Out (a
// Submitter, a SweepSubmitter): it records every call and answers with
// Answer, which a test may replace at any time with Set. Safe for
// concurrent use, as the servers under test call it from many goroutines.
type Stub[In, Out any] struct {
	mu  sync.Mutex
	got []In
	// answer is given the call's context, its argument and how many calls
	// came before it; nil means the default passed to Call.
	answer func(ctx context.Context, in In, n int) (Out, error)
}

// NewStub returns a stub answering with answer (nil: the default).
func NewStub[In, Out any](answer func(ctx context.Context, in In, n int) (Out, error)) *Stub[In, Out] {
	return &Stub[In, Out]{answer: answer}
}

// Call records in and answers it, with def(in) when no answer is set.
func (s *Stub[In, Out]) Call(ctx context.Context, in In, def func(In) Out) (Out, error) {
	s.mu.Lock()
	n := len(s.got)
	s.got = append(s.got, in)
	answer := s.answer
	s.mu.Unlock()
	if answer != nil {
		return answer(ctx, in, n)
	}
	return def(in), nil
}

// Set replaces the answer for the calls to come.
func (s *Stub[In, Out]) Set(answer func(ctx context.Context, in In, n int) (Out, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer = answer
}

// Calls returns a copy of the arguments of every call so far, in order.
func (s *Stub[In, Out]) Calls() []In {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]In(nil), s.got...)
}
