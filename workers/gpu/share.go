package gpu

// Shares of one device.
//
// A job may ask for part of one GPU (jobs.Size.GPUShare, in thousandths
// here). The allocator packs such shares onto a device until they add up
// to one whole device (Whole) and binds each sharer to that device's
// UUID, as it binds a whole holder. A device that holds any share is
// never given whole, and one held whole takes no share: a job that asked
// for a whole GPU gets one nobody else computes on.
//
// Packing is best fit: a share goes to the device it fills most, ties to
// the lowest index, and opens an idle device only when no open one has
// room. That keeps the devices a stream of shares leaves idle, which
// whole jobs need, as many as it can.

// Whole is one whole device in thousandths.
const Whole = 1000

// shareHold is where one sharer holds how much.
type shareHold struct {
	pos, milli int
}

// Room is how many thousandths of one device shares may still take.
type Room struct {
	// Pos is the device's position in the allocator (index order).
	Pos  int
	Free int
}

// TakeShare gives key milli thousandths (1 to Whole-1) of one device: of
// a device that holds shares or is pinned, best fit, or else, when open is
// true, of the lowest idle device. opened says it took an idle one. It
// gives nothing (and false) for a share out of range, for a key that
// holds something already, or where no device has room.
func (a *Allocator) TakeShare(key string, milli int, open bool) (d Device, opened, ok bool) {
	if milli < 1 || milli >= Whole || key == "" || a.holds(key) {
		return Device{}, false, false
	}
	best := -1
	for i := range a.devs {
		if a.holder[i] != "" || a.used[i] == 0 && !a.pinned[i] {
			continue // whole, or idle: not open to shares
		}
		if free := Whole - a.used[i]; free >= milli && (best < 0 || free < Whole-a.used[best]) {
			best = i
		}
	}
	if best < 0 && open {
		for i := range a.devs {
			if a.idle(i) {
				best, opened = i, true
				break
			}
		}
	}
	if best < 0 {
		return Device{}, false, false
	}
	a.used[best] += milli
	a.sharers[key] = shareHold{pos: best, milli: milli}
	return a.devs[best], opened, true
}

// Share is the thousandths key holds of its device (0 for a whole holder
// or none).
func (a *Allocator) Share(key string) int { return a.sharers[key].milli }

// Rooms lists the devices that hold shares and have room for more, in
// index order.
func (a *Allocator) Rooms() []Room {
	var out []Room
	for i := range a.devs {
		if a.used[i] > 0 && a.used[i] < Whole {
			out = append(out, Room{Pos: i, Free: Whole - a.used[i]})
		}
	}
	return out
}

// Pin keeps the devices at pos open to shares even if their last share
// ends, until Unpin: a worker that offered their room to jobs it has not
// received yet must find it still there, not given whole to another job.
func (a *Allocator) Pin(rooms []Room) {
	for _, r := range rooms {
		a.pinned[r.Pos] = true
	}
}

// Unpin ends Pin.
func (a *Allocator) Unpin(rooms []Room) {
	for _, r := range rooms {
		a.pinned[r.Pos] = false
	}
}

// Shared is how many devices hold shares or are pinned for them: each
// counts as one of the worker's slots, however little of it is held.
func (a *Allocator) Shared() int {
	n := 0
	for i := range a.devs {
		if a.used[i] > 0 || a.pinned[i] && a.holder[i] == "" {
			n++
		}
	}
	return n
}

// PinnedIdle is how many pinned devices hold no share: kept, but nothing
// runs on them.
func (a *Allocator) PinnedIdle() int {
	n := 0
	for i := range a.devs {
		if a.pinned[i] && a.used[i] == 0 && a.holder[i] == "" {
			n++
		}
	}
	return n
}
