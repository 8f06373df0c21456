package telemetry

import (
	"context"
	"math"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/queues"
)

// Collect builds a Snapshot from the store and the worker registry: queue
// depths and ages, and per pool the busy and idle slots of registered
// workers, workers by state, and what the pool costs per hour right now. quota is each fixed pool's
// prepaid slots: it costs the same whether or not its workers are up.
func Collect(ctx context.Context, store PoolReader, reg WorkerLister, pools []policy.Pool, quota map[string]int, now time.Time) (Snapshot, error) {
	qs, err := store.QueueStats(ctx)
	if err != nil {
		return Snapshot{At: now}, err
	}
	ws, err := reg.Workers(ctx)
	if err != nil {
		return Snapshot{At: now}, err
	}
	return SnapshotOf(now, qs, ws, pools, quota), nil
}

// SnapshotOf builds a Snapshot from queue depths and the worker registry
// already read (`ballast status` has them in hand).
func SnapshotOf(now time.Time, qs []queues.QueueStats, ws []queues.WorkerInfo, pools []policy.Pool, quota map[string]int) Snapshot {
	s := Snapshot{At: now, CostPerHourByPool: map[string]float64{}}
	for _, q := range qs {
		s.Queues = append(s.Queues, QueueDepth{Queue: string(q.Queue), Pending: q.Pending + q.Scheduled, OldestSeconds: q.OldestPendingSeconds})
	}
	byPool := map[string]*PoolSlots{}
	for _, p := range pools {
		byPool[p.Name] = &PoolSlots{Pool: p.Name, Kind: string(p.Kind), Workers: map[string]int{}}
		if p.Kind == policy.PoolFixed {
			s.CostPerHourByPool[p.Name] = float64(quota[p.Name]) * p.PricePerSlotHour
		}
	}
	price := map[string]policy.Pool{}
	for _, p := range pools {
		price[p.Name] = p
	}
	fixedSlots, fixedBusy := 0, 0
	for _, w := range ws {
		s.Fencing = append(s.Fencing, WorkerFencing{Worker: w.ID, Pool: w.Pool, Fences: w.SelfFences, Seconds: w.SelfFencedSeconds})
		if w.Isolation != nil {
			in, out := w.Isolation.InForce()
			s.Isolation = append(s.Isolation, WorkerIsolation{Worker: w.ID, Mode: w.Isolation.Mode, InForce: in, NotInForce: out})
		}
		ps := byPool[w.Pool]
		if ps == nil {
			continue // a worker of a pool no longer configured
		}
		state := WorkerUp
		if w.Draining {
			state = WorkerDraining
		}
		ps.Workers[state]++
		busy := min(w.Busy, w.Slots)
		ps.Busy += busy
		ps.Idle += w.Slots - busy
		p := price[w.Pool]
		if p.Kind == policy.PoolFixed {
			fixedSlots += w.Slots
			fixedBusy += busy
		} else {
			s.CostPerHourByPool[w.Pool] += float64(w.Slots) * p.PricePerSlotHour
		}
	}
	for _, p := range pools {
		s.Pools = append(s.Pools, *byPool[p.Name])
	}
	s.FixedIdleRatio = math.NaN()
	if fixedSlots > 0 {
		s.FixedIdleRatio = 1 - float64(fixedBusy)/float64(fixedSlots)
	}
	return s
}
