package gpu

import (
	"slices"
)

// Allocator hands a fixed set of devices out to holders (a worker's running
// attempts, by task ID) so that no device is ever held by two of them
// whole, and shares of one device never add up to more than one device
// (see share.go). It is deterministic, lowest indices first, and not safe
// for concurrent use: the worker calls it under its own lock.
type Allocator struct {
	devs   []Device         // in index order
	holder []string         // holder[i] holds devs[i] whole; "" = none
	held   map[string][]int // whole holder -> positions in devs
	// used[i] is the thousandths of devs[i] its shares hold; sharers
	// maps each share holder to its device and share.
	used    []int
	sharers map[string]shareHold
	// pinned[i] keeps devs[i] for shares while it is set, even empty:
	// see Pin.
	pinned []bool
}

// NewAllocator returns an allocator over devs, all free.
func NewAllocator(devs []Device) *Allocator {
	d := slices.Clone(devs)
	// Stable: the MIG instances of one GPU share its index and keep
	// nvidia-smi's order.
	slices.SortStableFunc(d, func(a, b Device) int { return a.Index - b.Index })
	return &Allocator{devs: d, holder: make([]string, len(d)), held: map[string][]int{},
		used: make([]int, len(d)), sharers: map[string]shareHold{}, pinned: make([]bool, len(d))}
}

// idle reports whether position i is held by nobody, whole or in part,
// and kept for nobody.
func (a *Allocator) idle(i int) bool {
	return a.holder[i] == "" && a.used[i] == 0 && !a.pinned[i]
}

// holds reports whether key holds anything, whole or a share.
func (a *Allocator) holds(key string) bool {
	_, shares := a.sharers[key]
	return a.held[key] != nil || shares
}

// Take gives key n idle devices whole, lowest indices first: never one
// that holds a share. It gives none (and false) when n < 1, when fewer
// than n are idle, or when key already holds something: a holder takes
// once and frees once, so a repeated Take cannot leak what the first one
// took.
func (a *Allocator) Take(key string, n int) ([]Device, bool) {
	if n < 1 || key == "" || a.holds(key) || a.FreeCount() < n {
		return nil, false
	}
	pos := make([]int, 0, n)
	for i := range a.devs {
		if len(pos) == n {
			break
		}
		if a.idle(i) {
			pos = append(pos, i)
		}
	}
	out := make([]Device, n)
	for k, i := range pos {
		a.holder[i] = key
		out[k] = a.devs[i]
	}
	a.held[key] = pos
	return out, true
}

// Free returns what key holds to the pool and says how many devices that
// freed: all it held whole, or 1 for a share that was its device's last
// (0 when key holds nothing: freeing twice is harmless).
func (a *Allocator) Free(key string) int {
	if s, ok := a.sharers[key]; ok {
		delete(a.sharers, key)
		a.used[s.pos] -= s.milli
		if a.used[s.pos] == 0 {
			return 1
		}
		return 0
	}
	pos := a.held[key]
	for _, i := range pos {
		a.holder[i] = ""
	}
	delete(a.held, key)
	return len(pos)
}

// Held is the devices key holds, in index order (nil: none).
func (a *Allocator) Held(key string) []Device {
	if s, ok := a.sharers[key]; ok {
		return []Device{a.devs[s.pos]}
	}
	pos := a.held[key]
	if pos == nil {
		return nil
	}
	out := make([]Device, len(pos))
	for k, i := range pos {
		out[k] = a.devs[i]
	}
	return out
}

// Holders is every holder with its devices.
func (a *Allocator) Holders() map[string][]Device {
	out := make(map[string][]Device, len(a.held)+len(a.sharers))
	for key := range a.held {
		out[key] = a.Held(key)
	}
	for key := range a.sharers {
		out[key] = a.Held(key)
	}
	return out
}

// FreeCount is how many devices are idle: no one holds them, whole or in
// part, and none is pinned.
func (a *Allocator) FreeCount() int {
	n := 0
	for i := range a.devs {
		if a.idle(i) {
			n++
		}
	}
	return n
}

// Len is how many devices the allocator manages.
func (a *Allocator) Len() int { return len(a.devs) }

// Slot is one device and who holds it: Holder whole ("" = no one), or
// Sharers, who hold Used thousandths of it between them.
type Slot struct {
	Device  Device
	Holder  string
	Sharers []string
	Used    int
}

// Slots lists every device in index order with its holders, the sharers
// of a device sorted.
func (a *Allocator) Slots() []Slot {
	out := make([]Slot, len(a.devs))
	for i, d := range a.devs {
		out[i] = Slot{Device: d, Holder: a.holder[i], Used: a.used[i]}
	}
	for key, s := range a.sharers {
		out[s.pos].Sharers = append(out[s.pos].Sharers, key)
	}
	for i := range out {
		slices.Sort(out[i].Sharers)
	}
	return out
}
