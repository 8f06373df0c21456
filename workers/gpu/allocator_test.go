package gpu_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ballastdev/ballast/workers/gpu"
)

func TestAllocatorLowestFirst(t *testing.T) {
	a := gpu.NewAllocator(fourGPUs(t))
	if got, ok := a.Take("a", 2); !ok || fmt.Sprint(indices(got)) != "[0 1]" {
		t.Fatalf("Take(a, 2) = %v %v", indices(got), ok)
	}
	if got, ok := a.Take("b", 1); !ok || fmt.Sprint(indices(got)) != "[2]" {
		t.Fatalf("Take(b, 1) = %v %v", indices(got), ok)
	}
	if _, ok := a.Take("c", 2); ok {
		t.Fatal("Take(c, 2) with one free succeeded")
	}
	if _, ok := a.Take("b", 1); ok {
		t.Fatal("a second Take by b succeeded")
	}
	if _, ok := a.Take("d", 0); ok {
		t.Fatal("Take(d, 0) succeeded")
	}
	if n := a.Free("a"); n != 2 || a.FreeCount() != 3 {
		t.Fatalf("Free(a) = %d, free %d", n, a.FreeCount())
	}
	if n := a.Free("a"); n != 0 {
		t.Fatalf("second Free(a) = %d", n)
	}
	if got, ok := a.Take("c", 3); !ok || fmt.Sprint(indices(got)) != "[0 1 3]" {
		t.Fatalf("Take(c, 3) = %v %v", indices(got), ok)
	}
	slots := a.Slots()
	if slots[0].Holder != "c" || slots[2].Holder != "b" || slots[3].Holder != "c" {
		t.Errorf("Slots = %+v", slots)
	}
	if h := a.Holders(); len(h) != 2 || len(h["c"]) != 3 || len(h["b"]) != 1 {
		t.Errorf("Holders = %v", h)
	}
}

// TestAllocatorProperty runs random takes and frees against a model: no
// device is ever held by two keys, each key holds what it took, and held
// plus free is every device.
func TestAllocatorProperty(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		devs := fourGPUs(t)
		if seed%2 == 1 {
			devs = append(devs, gpu.Device{Index: 7, UUID: "GPU-77", Name: "x", MemoryMiB: 1}, gpu.Device{Index: 5, UUID: "GPU-55", Name: "x", MemoryMiB: 1})
		}
		a := gpu.NewAllocator(devs)
		model := map[string]int{} // key -> how many it holds
		for step := range 300 {
			key := fmt.Sprintf("job-%d", rng.IntN(8))
			if rng.IntN(3) == 0 {
				want := model[key]
				if got := a.Free(key); got != want {
					t.Fatalf("seed %d step %d: Free(%s) = %d, want %d", seed, step, key, got, want)
				}
				delete(model, key)
			} else {
				n := rng.IntN(4)
				free := len(devs)
				for _, k := range model {
					free -= k
				}
				got, ok := a.Take(key, n)
				wantOK := n >= 1 && model[key] == 0 && n <= free
				if ok != wantOK || ok && len(got) != n {
					t.Fatalf("seed %d step %d: Take(%s, %d) = %d devices, %v; want %v (free %d, held %d)", seed, step, key, n, len(got), ok, wantOK, free, model[key])
				}
				if ok {
					model[key] = n
				}
			}
			owner := map[int]string{}
			held := 0
			for key, ds := range a.Holders() {
				if len(ds) != model[key] {
					t.Fatalf("seed %d step %d: %s holds %d, want %d", seed, step, key, len(ds), model[key])
				}
				for _, d := range ds {
					if o, dup := owner[d.Index]; dup {
						t.Fatalf("seed %d step %d: GPU %d held by %s and %s", seed, step, d.Index, o, key)
					}
					owner[d.Index] = key
					held++
				}
			}
			if held+a.FreeCount() != len(devs) {
				t.Fatalf("seed %d step %d: %d held + %d free != %d", seed, step, held, a.FreeCount(), len(devs))
			}
			for _, s := range a.Slots() {
				if s.Holder != owner[s.Device.Index] {
					t.Fatalf("seed %d step %d: Slots says GPU %d is %q's, Holders %q's", seed, step, s.Device.Index, s.Holder, owner[s.Device.Index])
				}
			}
		}
	}
}
