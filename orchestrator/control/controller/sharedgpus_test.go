package controller_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/queues"
)

// A GPU worker's report of what shares use of each GPU reaches the
// policy, which counts the room beside them from it (rules 3 and 5).
func TestSnapshotCarriesSharedGPUs(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	gpus := []queues.GPUInfo{{Index: 0, Job: "a,b", Share: 600}, {Index: 1, Job: "c"}, {Index: 2}, {Index: 3, Job: "d", Share: 300}}
	if _, err := store.Heartbeat(ctx, queues.WorkerInfo{ID: "g1", Pool: "od", Slots: 4, StartedAt: time.Now(), GPUs: gpus}, nil); err != nil {
		t.Fatal(err)
	}
	h := &controller.Hybrid{Store: store, Config: policy.DefaultConfig(),
		Pools:  []policy.Pool{{Name: "od", Kind: policy.PoolOnDemand, PricePerSlotHour: 2, SlotsPerWorker: 4, MaxWorkers: 2}},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	s, err := h.Snapshot(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Workers) != 1 || !slices.Equal(s.Workers[0].SharedGPUs, []int{600, 300}) {
		t.Fatalf("snapshot workers %+v; want g1 with shares using 600 and 300 thousandths of two GPUs", s.Workers)
	}
}
