package sim

import "time"

// What an elastic worker is billed for and leaves unused, in ways no rule
// recovers while its jobs run:
//   - pinned: free slots while a running job that cannot checkpoint keeps
//     the worker up. No rule can move such a job, so its machine stays
//     billed, free slots and all, until the job ends: the part of an
//     elastic pool's cost that only checkpointing (or a machine of its
//     own size) would save (PoolUsage.PinnedSlotHours).
//   - room: what the shares on each shared GPU fall short of a whole one.
//     A slot holding any share is a whole GPU billed: this is what shares
//     that did not fill their GPUs cost (PoolUsage.ShareRoomSlotHours).
//
// Both hold from one change of the worker to the next, so they are kept
// as rates since that change and added up when it changes again or is
// billed: the simulator cannot work them out afterwards.

// unused is a worker's rates since its last change.
type unused struct {
	pinned int32 // free slots, while a job that cannot checkpoint runs
	room   int32 // thousandths of a GPU left beside shares
	since  time.Duration
}

// noteUnused adds up, for an elastic worker whose jobs or state just
// changed, what it left unused since the last change, and starts the
// next stretch at the rates it has now.
func (s *sim) noteUnused(w *worker) {
	if !s.pools[w.pool].elastic {
		return
	}
	s.flushUnused(w, s.now)
	for _, used := range w.rooms {
		if used > 0 {
			w.unused.room += 1000 - int32(used)
		}
	}
	if w.busy >= w.slots {
		return
	}
	for _, ti := range w.tasks {
		if t := &s.tasks[ti]; t.state == tsRunning && !t.ckpt {
			w.unused.pinned = w.slots - w.busy
			return
		}
	}
}

// flushUnused adds the stretch up to until to w's pool, and starts an
// empty one there.
func (s *sim) flushUnused(w *worker, until time.Duration) {
	p := &s.pools[w.pool]
	h := (until - w.unused.since).Hours()
	p.use.PinnedSlotHours += float64(w.unused.pinned) * h
	p.use.ShareRoomSlotHours += float64(w.unused.room) / 1000 * h
	w.unused = unused{since: until}
}
