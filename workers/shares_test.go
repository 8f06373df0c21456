package workers

import (
	"context"
	"testing"
	"time"

	"github.com/ballastdev/ballast/workers/gpu"
)

// TestBookCountsASharedGPUAsOneSlot walks a book of one GPU through two
// halves: they share the GPU and hold its one slot between them; a take
// finds the room the second half fits in, and none for a third; a whole
// job waits until both halves are gone.
func TestBookCountsASharedGPUAsOneSlot(t *testing.T) {
	b := newSlotBook(1, []gpu.Device{{Index: 0, UUID: "GPU-a"}})
	short := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}
	h, err := b.admitTake(context.Background(), 8)
	if err != nil || len(h.keys) != 1 || len(h.rooms) != 0 {
		t.Fatalf("first take holds %+v (%v), want the one slot and no room", h, err)
	}
	if !b.seat(&h, "a", 500) {
		t.Fatal("the first half found no seat")
	}
	b.endTake(&h)
	if got := b.busy(); got != 1 {
		t.Fatalf("busy %d with one half running, want 1", got)
	}
	h, err = b.admitTake(context.Background(), 8)
	if err != nil || len(h.keys) != 0 || len(h.rooms) != 1 || h.rooms[0].Free != 500 {
		t.Fatalf("second take holds %+v (%v), want no slot and a room of 500", h, err)
	}
	if !b.seat(&h, "b", 500) {
		t.Fatal("the second half found no seat in the room")
	}
	b.endTake(&h)
	if got := b.busy(); got != 1 {
		t.Fatalf("busy %d with two halves on one GPU, want 1", got)
	}
	if devs, ok := b.grant("b", 1, 500); !ok || len(devs) != 1 || devs[0].UUID != "GPU-a" || b.share("b") != 500 {
		t.Fatalf("the second half is granted %+v %v share %d, want GPU-a and 500", devs, ok, b.share("b"))
	}
	if _, err := b.admitTake(short(), 8); err == nil {
		t.Fatal("a take found room on a GPU two halves fill")
	}
	b.release("a")
	h, err = b.admitTake(short(), 8)
	if err != nil || len(h.rooms) != 1 || len(h.keys) != 0 {
		t.Fatalf("after one half ended the take holds %+v (%v), want its room", h, err)
	}
	b.endTake(&h)
	if _, err := b.admitShared(short(), "w"); err == nil {
		t.Fatal("a whole job was admitted while a half holds the GPU")
	}
	b.release("b")
	if _, err := b.admitShared(short(), "w"); err != nil {
		t.Fatalf("the whole job, once both halves ended: %v", err)
	}
	if devs, ok := b.grant("w", 1, 0); !ok || len(devs) != 1 || b.share("w") != 0 {
		t.Fatalf("the whole job is granted %+v %v", devs, ok)
	}
}

func TestMPSEnv(t *testing.T) {
	for share, want := range map[int]string{500: "50", 1: "1", 999: "100", 250: "25", 333: "34"} {
		if got := mpsEnv(share); got != EnvMPSThreadPercentage+"="+want {
			t.Errorf("mpsEnv(%d) = %q, want %s", share, got, want)
		}
	}
}
