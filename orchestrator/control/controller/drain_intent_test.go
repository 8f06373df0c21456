package controller_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/workers"
)

// TestDrainIsRecordedThenWoken: the controller's Drain records the intent
// before it wakes the worker, so a real worker drains within a wake-up
// (its heartbeat is far longer), and a drain for a worker that is gone is
// an error rather than a silent no-op.
func TestDrainIsRecordedThenWoken(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	srv := testenv.NATS(t)
	subj := events.Subjects{Prefix: ns}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	w, err := workers.New(store, workers.Options{Pool: "ondemand", Queues: []queues.Queue{queues.QueueBurst},
		Heartbeat: time.Minute, SelfFence: -1, Control: testenv.NATSConn(t, srv), Subjects: subj, Logger: log,
		LogDir: t.TempDir(), CheckpointDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	h := &controller.Hybrid{Store: store, Logger: log, Control: workers.NATSControl{Conn: testenv.NATSConn(t, srv), Subjects: subj}}
	if err := h.Apply(ctx, policy.Plan{Actions: []policy.Action{{Kind: policy.Drain, Worker: w.ID()}}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, "the worker draining", func() bool {
		ws, err := registry.New(store).Workers(ctx)
		return err == nil && len(ws) == 1 && ws[0].Draining
	})
	err = h.Apply(ctx, policy.Plan{Actions: []policy.Action{{Kind: policy.Drain, Worker: "gone"}}}, time.Now())
	if !errors.Is(err, registry.ErrUnknownWorker) {
		t.Fatalf("drain of an unknown worker: %v, want ErrUnknownWorker", err)
	}
}
