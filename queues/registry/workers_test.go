package registry_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/queues"
)

// TestRegistryKeepsLabelsAndGPUs: what a GPU worker reports of its devices
// and labels comes back from the registry as it was sent.
func TestRegistryKeepsLabelsAndGPUs(t *testing.T) {
	t.Parallel()
	r, k, _ := newStore(t)
	ctx := context.Background()
	w := queues.WorkerInfo{ID: "gpu-1", Pool: "fixed", Slots: 2, Busy: 1,
		Labels: map[string]string{queues.LabelGPUModel: "NVIDIA A100-SXM4-80GB"},
		GPUs: []queues.GPUInfo{
			{Index: 0, UUID: "GPU-aa", Name: "NVIDIA A100-SXM4-80GB", MemoryMiB: 81920, Job: "job-1"},
			{Index: 1, UUID: "GPU-bb", Name: "NVIDIA A100-SXM4-80GB", MemoryMiB: 81920},
		}}
	if _, err := k.Register(ctx, w); err != nil {
		t.Fatal(err)
	}
	ws, err := r.Workers(ctx)
	if err != nil || len(ws) != 1 {
		t.Fatalf("Workers = %+v, %v", ws, err)
	}
	if !reflect.DeepEqual(ws[0].Labels, w.Labels) || !reflect.DeepEqual(ws[0].GPUs, w.GPUs) {
		t.Errorf("registry gave labels %v and GPUs %+v, want %v and %+v", ws[0].Labels, ws[0].GPUs, w.Labels, w.GPUs)
	}
}

// TestWorkersReadsBeatsAndLives: each worker comes back with its last beat
// and with the start its life is billed from, as its first beat opened the
// life: a worker that took its ID over after a fence is billed from its
// new identity, not from its process's start. A worker that left is not
// listed.
func TestWorkersReadsBeatsAndLives(t *testing.T) {
	t.Parallel()
	r, k, c := newStore(t)
	ctx := context.Background()
	t0 := c.Now().Truncate(time.Millisecond).UTC()
	since := t0.Add(-time.Minute)
	refenced := queues.WorkerInfo{ID: "w-2", Pool: "ondemand", Slots: 1, StartedAt: t0.Add(-time.Hour), IdentitySince: since}
	fixed := queues.WorkerInfo{ID: "f-1", Pool: "fixed", Slots: 4, StartedAt: t0}
	gone := queues.WorkerInfo{ID: "gone-1", Pool: "fixed", Slots: 1, StartedAt: t0}
	for _, w := range []queues.WorkerInfo{refenced, fixed, gone} {
		if _, err := k.Heartbeat(ctx, w, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Deregister(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	ws, err := r.Workers(ctx)
	if err != nil || len(ws) != 2 {
		t.Fatalf("Workers = %+v, %v; want w-2 and f-1", ws, err)
	}
	byID := map[string]queues.WorkerInfo{}
	for _, w := range ws {
		byID[w.ID] = w
		if !w.LastBeat.Equal(t0) {
			t.Errorf("%s last beat %v, want %v", w.ID, w.LastBeat, t0)
		}
	}
	if got := byID["w-2"]; !got.BilledFrom.Equal(since) || !got.StartedAt.Equal(refenced.StartedAt) {
		t.Errorf("re-registered worker billed from %v (started %v), want its identity's start %v", got.BilledFrom, got.StartedAt, since)
	}
	if got := byID["f-1"]; !got.BilledFrom.Equal(t0) || got.Slots != 4 || got.Pool != "fixed" {
		t.Errorf("fixed worker %+v, want billed from its start %v", got, t0)
	}
}

// TestWorkersOfAnUnreadableEntry: an entry whose info is not JSON (written
// by hand, or by a version that wrote another shape) is still listed, by
// its ID, rather than hiding a live worker.
func TestWorkersOfAnUnreadableEntry(t *testing.T) {
	t.Parallel()
	r, k, c := newStore(t)
	ctx := context.Background()
	ns := k.Namespace()
	if err := k.Redis().ZAdd(ctx, ns.Workers(), redis.Z{Score: float64(c.Now().UnixMilli()), Member: "odd"}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := k.Redis().HSet(ctx, ns.Worker("odd"), "info", "{not json").Err(); err != nil {
		t.Fatal(err)
	}
	ws, err := r.Workers(ctx)
	if err != nil || len(ws) != 1 || ws[0].ID != "odd" || !ws[0].LastBeat.Equal(c.Now().Truncate(time.Millisecond)) {
		t.Fatalf("Workers = %+v, %v; want the odd entry by its ID", ws, err)
	}
}
