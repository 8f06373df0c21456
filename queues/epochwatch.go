package queues

import (
	"context"
	"sync"
	"time"
)

// EpochWatch is one process's memory of the namespace's data: the epoch
// it saw, the newest job it saw and when it last saw them whole. Check it
// on a timer (the controller's tick, the worker's heartbeat); it says
// when Redis lost its data since the last look. Safe for concurrent use.
type EpochWatch struct {
	store  EpochChecker
	who    string
	create bool

	mu       sync.Mutex
	known    Epoch
	newest   string
	newestAt time.Time
	lastSeen time.Time
	loss     *DataLoss
	// foundFor is the epoch whose loss was last reported: a reader keeps
	// a vanished epoch until the next is written, and must not report
	// the same loss at every look meanwhile.
	foundFor Epoch
}

// EpochChecker is what a watch needs of the store: the check itself and
// the store's clock. It is an interface so that a service holding the
// store behind its own narrow interface can still build a watch. The
// clock method is unexported on purpose: the watch must stamp LastSeen
// with the same clock the store compares it against, so only *Store
// implements it.
type EpochChecker interface {
	CheckEpoch(ctx context.Context, c EpochCheck) (EpochView, error)
	clock() time.Time
}

// NewEpochWatch returns a watch of store's namespace for the process who.
// create says whether the process writes a missing epoch (controllers).
func NewEpochWatch(store EpochChecker, who string, create bool) *EpochWatch {
	return &EpochWatch{store: store, who: who, create: create}
}

// Check compares what the watch remembers with Redis now, and remembers
// what it finds: a loss is found once per process, then the new data is
// what it watches.
func (w *EpochWatch) Check(ctx context.Context) (EpochView, error) {
	w.mu.Lock()
	c := EpochCheck{Known: w.known, Newest: w.newest, NewestAt: w.newestAt, LastSeen: w.lastSeen, Create: w.create, Who: w.who}
	w.mu.Unlock()
	v, err := w.store.CheckEpoch(ctx, c)
	if err != nil {
		return v, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.loss = v.Loss
	if v.Found != "" {
		if v.Found != LossRolledBack && w.foundFor == c.Known {
			v.Found = ""
		}
		w.foundFor = c.Known
	}
	// A reader that found the epoch gone keeps the old one until a
	// controller writes the next: the record is written, and the next
	// epoch then reads as a change, which finds the record there.
	if v.Epoch.IsZero() {
		return v, nil
	}
	w.known = v.Epoch
	w.newest, w.newestAt = v.Newest, v.NewestAt
	w.lastSeen = w.store.clock()
	return v, nil
}

// Loss returns the unacknowledged loss record seen at the last check (nil:
// none).
func (w *EpochWatch) Loss() *DataLoss {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.loss
}

// Known returns the epoch the watch remembers (zero: none yet).
func (w *EpochWatch) Known() Epoch {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.known
}

// clock is the store's clock, for EpochWatch.
func (s *Store) clock() time.Time { return s.opts.Now() }
