package provider

import (
	"context"
	"time"
)

// Instance is one elastic worker a provider started.
type Instance struct {
	// ID is the provider's instance ID. It is also the worker's --id, so the
	// worker registry and the provider name the same worker the same way.
	ID string `json:"id"`
	// Pool is the pool the worker serves.
	Pool string `json:"pool"`
	// State is where the instance is in its life.
	State State `json:"state"`
	// LaunchedAt is when Launch was called for it.
	LaunchedAt time.Time `json:"launched_at,omitzero"`
	// StartedAt is when it began running; most providers bill from here.
	StartedAt time.Time `json:"started_at,omitzero"`
	// Err is the last error of a Failed instance (or a note on a Gone or
	// StockedOut one, such as a forced stop or why it could not be placed).
	Err string `json:"error,omitempty"`
	// ReclaimAt, when set, is when the provider takes the instance's
	// machine away (a spot interruption notice): the controller records a
	// spot notice for its worker, which checkpoints and requeues its jobs
	// before then.
	ReclaimAt time.Time `json:"reclaim_at,omitzero"`
}

// Provider starts and releases the elastic workers of pools. Implementations
// are safe for concurrent use.
type Provider interface {
	// Launch asks for n workers of pool and returns the instances it started
	// launching; their IDs are known at once. It may return instances and an
	// error together (say 2 of 5 started, then a stock-out): the caller must
	// track the instances it got whatever the error. Errors that the
	// controller acts on match ErrStockOut or ErrLaunchFailed with errors.Is
	// and are *LaunchError values.
	Launch(ctx context.Context, pool string, n int) ([]Instance, error)
	// Release hands one worker back: the worker gets SIGTERM (it drains:
	// stops taking work, checkpoints and requeues) and is force-stopped after
	// a timeout. Releasing an instance that is already being released, or is
	// gone, is not an error.
	Release(ctx context.Context, id string) error
	// List returns the provider's current instances, so a restarted
	// controller can reconcile its view with what is really running.
	List(ctx context.Context) ([]Instance, error)
	// Close stops the provider's background work. Whether it also stops the
	// instances is up to each implementation and documented there.
	Close() error
}
