package gpu

import (
	"slices"
)

// Allocator hands a fixed set of devices out to holders (a worker's running
// attempts, by task ID) so that no device is ever held by two of them. It
// is deterministic, lowest indices first, and not safe for concurrent use:
// the worker calls it under its own lock.
type Allocator struct {
	devs   []Device         // in index order
	holder []string         // holder[i] holds devs[i]; "" = free
	held   map[string][]int // holder -> positions in devs
}

// NewAllocator returns an allocator over devs, all free.
func NewAllocator(devs []Device) *Allocator {
	d := slices.Clone(devs)
	slices.SortFunc(d, func(a, b Device) int { return a.Index - b.Index })
	return &Allocator{devs: d, holder: make([]string, len(d)), held: map[string][]int{}}
}

// Take gives key n free devices, lowest indices first. It gives none (and
// false) when n < 1, when fewer than n are free, or when key already holds
// devices: a holder takes once and frees once, so a repeated Take cannot
// leak what the first one took.
func (a *Allocator) Take(key string, n int) ([]Device, bool) {
	if n < 1 || key == "" || a.held[key] != nil || a.FreeCount() < n {
		return nil, false
	}
	pos := make([]int, 0, n)
	for i := range a.devs {
		if len(pos) == n {
			break
		}
		if a.holder[i] == "" {
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
// was (0 when key holds none: freeing twice is harmless).
func (a *Allocator) Free(key string) int {
	pos := a.held[key]
	for _, i := range pos {
		a.holder[i] = ""
	}
	delete(a.held, key)
	return len(pos)
}

// Held is the devices key holds, in index order (nil: none).
func (a *Allocator) Held(key string) []Device {
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
	out := make(map[string][]Device, len(a.held))
	for key := range a.held {
		out[key] = a.Held(key)
	}
	return out
}

// FreeCount is how many devices no one holds.
func (a *Allocator) FreeCount() int {
	n := 0
	for _, h := range a.holder {
		if h == "" {
			n++
		}
	}
	return n
}

// Len is how many devices the allocator manages.
func (a *Allocator) Len() int { return len(a.devs) }

// Slot is one device and who holds it ("" = free).
type Slot struct {
	Device Device
	Holder string
}

// Slots lists every device in index order with its holder.
func (a *Allocator) Slots() []Slot {
	out := make([]Slot, len(a.devs))
	for i, d := range a.devs {
		out[i] = Slot{Device: d, Holder: a.holder[i]}
	}
	return out
}
