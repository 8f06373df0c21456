package workers

import (
	"github.com/ballastdev/ballast/workers/gpu"
)

// Shares of a GPU on the worker's slots.
//
// A job that asks for a share of one GPU (jobs.Size.GPUShare) holds no
// slot of its own on a GPU worker: it holds part of a device, and the
// device counts as one slot while any share is on it (slotBook.used).
// So a worker of one GPU runs two half-GPU jobs at once and reports one
// slot busy. The controller, which places whole slots and counts each
// running job as one (capped at the worker's slots), sees that worker
// full too; on a worker of more GPUs it counts a shared GPU once per job
// on it, which overstates what is busy (never what is free) until the
// policy learns shares.
//
// The taker fills the room shares leave: it holds the whole slots that
// are free and pins the devices open to shares, asks Redis for the jobs
// that fit those (queues.TakeFit), then seats each job it got, in the
// order the take fitted them. Placed deliveries and those of asynq's
// server (Redis Cluster) are admitted to whole slots as before, since the
// worker learns a job's share only once it has claimed it; such a job is
// packed as it starts (grant), which may give its slot back, but a slot
// with no whole one free does not take it.

// seat gives taken job key what it fits of hold: for a share, room on a
// device open to shares, else a whole slot of the hold, whose device it
// opens; for anything else a whole slot of the hold, whose device the
// attempt is granted when it starts (grant). It reports false when the
// hold has nothing left that fits, which the take's fit makes rare (a
// device's room only grows while it is pinned): the attempt then asks for
// a device of its own when it starts, and fails if none is free.
func (b *slotBook) seat(h *takeHold, key string, share int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if share > 0 && b.gpus != nil {
		if _, _, ok := b.gpus.TakeShare(key, share, false); ok {
			b.held[key] = 0 // the device counts, not the job
			return true
		}
		if len(h.keys) == 0 {
			return false
		}
		if _, _, ok := b.gpus.TakeShare(key, share, true); !ok {
			return false
		}
		b.unhold(h)
		b.held[key] = 0
		return true
	}
	if len(h.keys) == 0 {
		return false
	}
	b.unhold(h)
	b.held[key] = 1
	return true
}

// unhold gives up the first whole slot of h; callers hold mu.
func (b *slotBook) unhold(h *takeHold) {
	delete(b.held, h.keys[0])
	delete(b.looking, h.keys[0])
	h.keys = h.keys[1:]
}

// endTake releases what h still holds: its unused slots and its pins.
func (b *slotBook) endTake(h *takeHold) {
	b.mu.Lock()
	for len(h.keys) > 0 {
		b.unhold(h)
	}
	if b.gpus != nil {
		b.gpus.Unpin(h.rooms)
	}
	h.rooms = nil
	b.cond.Broadcast()
	b.mu.Unlock()
}

// grant gives the attempt key the device of the share it was seated on,
// or else n whole GPUs no other attempt holds, lowest indices first. A
// job of share milli admitted to a whole slot (placed, or through asynq's
// server) is packed as it starts: onto a device open to shares if one has
// room, which gives its slot back, else onto an idle device, which then
// counts in its slot's place. False means fewer than n are free.
func (b *slotBook) grant(key string, n, share int) ([]gpu.Device, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if held := b.gpus.Held(key); held != nil {
		return held, true
	}
	if share > 0 && n == 1 {
		if d, _, ok := b.gpus.TakeShare(key, share, true); ok {
			if b.held[key] > 0 {
				b.held[key] = 0
				b.cond.Broadcast()
			}
			return []gpu.Device{d}, true
		}
	}
	return b.gpus.Take(key, n)
}

// share is the thousandths of a GPU key was seated on (0: none, or whole
// GPUs).
func (b *slotBook) share(key string) int {
	if b.gpus == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.gpus.Share(key)
}

// ungrant gives back what grant or seat gave key, and wakes the waiters:
// a device whose last share ended is free for a whole job.
func (b *slotBook) ungrant(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gpus.Free(key) > 0 {
		b.cond.Broadcast()
	}
}

// gpuSlots lists the GPUs with their holders.
func (b *slotBook) gpuSlots() []gpu.Slot {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.gpus.Slots()
}

// sharing is how many attempts hold shares, and on how many devices.
func (b *slotBook) sharing() (sharers, devices int) {
	if b.gpus == nil {
		return 0, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.gpus.Slots() {
		if len(s.Sharers) > 0 {
			sharers += len(s.Sharers)
			devices++
		}
	}
	return sharers, devices
}
