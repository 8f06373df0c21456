package gpu_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/workers/gpu"
)

// TestSharesPack runs scripts of takes and frees on four GPUs. A step is
// "KEY share MILLI" (best fit onto open devices, else the lowest idle),
// "KEY share- MILLI" (onto open devices only), "KEY whole N", "KEY free",
// "pin" (the open devices' rooms) or "unpin"; want is the devices the
// step gives, "-" for none, or for free and pin what Rooms says after.
func TestSharesPack(t *testing.T) {
	type step struct{ do, want string }
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"two halves share the lowest GPU", []step{{"a share 500", "0"}, {"b share 500", "0"}, {"c share 500", "1"}}},
		{"a whole job skips a shared GPU", []step{{"a share 100", "0"}, {"w whole 1", "1"}, {"x whole 3", "-"}, {"y whole 2", "2 3"}}},
		{"a share skips a whole GPU", []step{{"w whole 1", "0"}, {"a share 999", "1"}, {"b share 2", "2"}}},
		{"never more than a whole GPU's worth", []step{{"a share 600", "0"}, {"b share 401", "1"}, {"c share 400", "0"}, {"d share 1", "1"}, {"e share 599", "2"}, {"g share 598", "1"}, {"f share 1", "2"}, {"h share 401", "3"}, {"i share 400", "2"}}},
		{"best fit: the fullest device with room", []step{{"a share 700", "0"}, {"b share 500", "1"}, {"c share 300", "0"}, {"d share 400", "1"}}},
		{"best fit, ties to the lowest index", []step{{"a share 700", "0"}, {"b share 700", "1"}, {"c share 200", "0"}, {"d share 300", "1"}}},
		{"a share that fits no open device opens none when told not to", []step{{"a share 600", "0"}, {"b share- 500", "-"}, {"c share- 400", "0"}}},
		{"the last share's end frees the device whole", []step{{"a share 500", "0"}, {"b share 500", "0"}, {"a free", "0:500"}, {"w whole 1", "1"}, {"b free", ""}, {"v whole 1", "0"}}},
		{"a pinned device keeps its room for shares", []step{{"a share 500", "0"}, {"pin", "0:500"}, {"a free", ""}, {"w whole 1", "1"}, {"b share- 800", "0"}, {"unpin", "0:200"}, {"x whole 2", "2 3"}}},
		{"a pinned idle device is not given whole", []step{{"a share 500", "0"}, {"pin", "0:500"}, {"a free", ""}, {"w whole 4", "-"}, {"unpin", ""}, {"w whole 4", "0 1 2 3"}}},
		{"out of range", []step{{"a share 0", "-"}, {"b share 1000", "-"}, {"c share -5", "-"}}},
		{"one hold per key", []step{{"a share 300", "0"}, {"a share 300", "-"}, {"a whole 1", "-"}, {"w whole 1", "1"}, {"w share 100", "-"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := gpu.NewAllocator(fourGPUs(t))
			var pinned []gpu.Room
			for _, s := range tc.steps {
				f := strings.Fields(s.do)
				var got string
				switch {
				case f[0] == "pin":
					pinned = a.Rooms()
					a.Pin(pinned)
					got = rooms(a)
				case f[0] == "unpin":
					a.Unpin(pinned)
					got = rooms(a)
				case f[1] == "free":
					a.Free(f[0])
					got = rooms(a)
				case f[1] == "whole":
					n, _ := strconv.Atoi(f[2])
					got = "-"
					if ds, ok := a.Take(f[0], n); ok {
						got = strings.Trim(fmt.Sprint(indices(ds)), "[]")
					}
				default:
					n, _ := strconv.Atoi(f[2])
					got = "-"
					if d, _, ok := a.TakeShare(f[0], n, f[1] == "share"); ok {
						got = strconv.Itoa(d.Index)
					}
				}
				if got != s.want {
					t.Fatalf("%q gave %q, want %q", s.do, got, s.want)
				}
			}
		})
	}
}

// rooms writes Rooms as "POS:FREE ...".
func rooms(a *gpu.Allocator) string {
	var s []string
	for _, r := range a.Rooms() {
		s = append(s, fmt.Sprintf("%d:%d", r.Pos, r.Free))
	}
	return strings.Join(s, " ")
}

// TestSharesProperty runs random whole takes, share takes and frees: no
// device ever holds more than a whole one's worth, or a share beside a
// whole holder; Slots, Share and Shared agree with what was taken; and a
// share opens an idle device only when no open one had room for it.
func TestSharesProperty(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 11))
		devs := fourGPUs(t)
		a := gpu.NewAllocator(devs)
		shares := map[string]int{} // share holder -> milli
		for step := range 400 {
			key := fmt.Sprintf("job-%d", rng.IntN(12))
			switch rng.IntN(4) {
			case 0:
				a.Free(key)
				delete(shares, key)
			case 1:
				a.Take(key, 1+rng.IntN(2))
			default:
				milli := 1 + rng.IntN(gpu.Whole-1)
				roomy := false
				for _, r := range a.Rooms() {
					roomy = roomy || r.Free >= milli
				}
				if _, opened, ok := a.TakeShare(key, milli, true); ok {
					shares[key] = milli
					if opened && roomy {
						t.Fatalf("seed %d step %d: a share of %d opened a device while an open one had room", seed, step, milli)
					}
				}
			}
			shared := 0
			for _, s := range a.Slots() {
				sum := 0
				for _, k := range s.Sharers {
					sum += shares[k]
					if a.Share(k) != shares[k] {
						t.Fatalf("seed %d step %d: Share(%s) = %d, want %d", seed, step, k, a.Share(k), shares[k])
					}
				}
				if sum != s.Used || s.Used > gpu.Whole || s.Used > 0 && s.Holder != "" {
					t.Fatalf("seed %d step %d: GPU %d holds %+v (shares add to %d)", seed, step, s.Device.Index, s, sum)
				}
				if s.Used > 0 {
					shared++
				}
			}
			if shared != a.Shared() {
				t.Fatalf("seed %d step %d: Shared() = %d, %d devices hold shares", seed, step, a.Shared(), shared)
			}
		}
	}
}
