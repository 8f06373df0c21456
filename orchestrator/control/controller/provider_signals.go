package controller

import (
	"context"
	"errors"
	"time"

	"github.com/ballastdev/ballast/orchestrator/control/provider"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/queues/registry"
)

// SpotNoticeWaker is the optional part of a WorkerControl that wakes a
// worker to act on a spot notice recorded for it. Without it the worker
// reads the notice at its next heartbeat. workers.NATSControl has it.
type SpotNoticeWaker interface {
	SpotNotice(ctx context.Context, workerID string, within time.Duration)
}

// bookStockOutsLocked books each instance the provider reports StockedOut
// as a stock-out of its pool, the same book a Launch refused with
// ErrStockOut goes into (see stockOut), so the policy falls back from the
// pool. Each instance is booked once, however often it is listed. h.mu is
// held.
//
// The booking is dated one SpotFallbackAfter ago: the provider has already
// waited for capacity (Kubernetes' unschedulable_after, a script's own
// patience) before it gave up, so waiting again would only delay the work.
// The policy falls back at once, and the booking keeps the pool out for
// SpotFallbackAfter more before it is asked again.
func (h *Hybrid) bookStockOutsLocked(instances []provider.Instance, now time.Time) {
	listed := make(map[string]bool, len(instances))
	for _, inst := range instances {
		listed[inst.ID] = true
		if inst.State != provider.StockedOut || h.bookedOut[inst.ID] {
			continue
		}
		h.bookedOut[inst.ID] = true
		if kind := h.poolKind(inst.Pool); h.Config.SpotFallbackAfter <= 0 || kind == policy.PoolFixed || kind == "" {
			continue
		}
		h.Logger.Warn("provider gave up on a launch for lack of capacity: booked as a stock-out of its pool",
			"instance", inst.ID, "pool", inst.Pool, "detail", inst.Err)
		at := now.Add(-h.Config.SpotFallbackAfter)
		l, ok := h.stockOut[inst.Pool]
		if !ok || l.RequestedAt.After(at) {
			l.Pool, l.RequestedAt = inst.Pool, at
		}
		l.Count++
		h.stockOut[inst.Pool] = l
	}
	for id := range h.bookedOut {
		if !listed[id] {
			delete(h.bookedOut, id)
		}
	}
}

// noticeSpot records a spot notice for the worker of each live instance
// the provider reports with a reclaim time (a spot interruption), and wakes
// it, the same path `ballast chaos spot-notice` takes. A notice is recorded
// once per reclaim time; one for a worker that has not registered yet is
// tried again next tick. Only spot pools are told: the registry refuses a
// notice for other workers, and an on-demand machine that goes away
// (a drained node) sends its worker SIGTERM, which drains it.
func (h *Hybrid) noticeSpot(ctx context.Context, instances []provider.Instance, now time.Time) {
	h.mu.Lock()
	var due []provider.Instance
	listed := make(map[string]bool, len(instances))
	for _, inst := range instances {
		listed[inst.ID] = true
		if inst.ReclaimAt.IsZero() || !inst.State.Live() || h.noticed[inst.ID].Equal(inst.ReclaimAt) {
			continue
		}
		if h.poolKind(inst.Pool) != policy.PoolSpot {
			h.noticed[inst.ID] = inst.ReclaimAt
			continue
		}
		due = append(due, inst)
	}
	for id := range h.noticed {
		if !listed[id] {
			delete(h.noticed, id)
		}
	}
	h.mu.Unlock()

	for _, inst := range due {
		err := h.workerBook().RequestSpotNotice(ctx, inst.ID, inst.ReclaimAt)
		switch {
		case errors.Is(err, registry.ErrUnknownWorker):
			continue // not registered yet (or already gone): look again next tick
		case err != nil && !errors.Is(err, registry.ErrNotSpot):
			h.Logger.Warn("spot notice not recorded; trying again next tick", "instance", inst.ID, "err", err)
			continue
		}
		h.mu.Lock()
		h.noticed[inst.ID] = inst.ReclaimAt
		h.mu.Unlock()
		if err != nil {
			h.Logger.Warn("provider reports a spot interruption for a worker that is not in a spot pool", "instance", inst.ID, "err", err)
			continue
		}
		h.Logger.Warn("spot interruption: the worker checkpoints and requeues its jobs", "instance", inst.ID,
			"pool", inst.Pool, "reclaim_at", inst.ReclaimAt)
		if w, ok := h.Control.(SpotNoticeWaker); ok {
			w.SpotNotice(ctx, inst.ID, max(inst.ReclaimAt.Sub(now), 0))
		}
	}
}
