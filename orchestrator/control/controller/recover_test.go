package controller_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/queues"
)

// TestRecoverWaitsForTheLossToSettle: Recover reads the stream only once
// the loss record is Settle old, so that the workers that ran the lost
// jobs have stopped them or published their ends; a record already that
// old, or none, is no reason to wait.
func TestRecoverWaitsForTheLossToSettle(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	const settle = 400 * time.Millisecond
	at := time.Now().UTC().Truncate(time.Millisecond)
	if _, err := store.RecordDataLoss(ctx, queues.DataLoss{At: at, Reason: queues.LossGone, By: "test"}); err != nil {
		t.Fatal(err)
	}
	var read time.Time
	o := controller.RecoverOptions{Store: store, Settle: settle, Logger: quiet,
		Replay: func(context.Context, func(events.Event)) (int, error) { read = time.Now(); return 0, nil }}
	rep, err := controller.Recover(ctx, o)
	if err != nil || !rep.Cleared {
		t.Fatalf("recover: %+v %v, want the record cleared", rep, err)
	}
	if early := at.Add(settle).Sub(read); early > 0 {
		t.Errorf("the stream was read %s before the loss was %s old", early, settle)
	}
	t.Logf("stream read %s after the loss (settle %s)", read.Sub(at).Round(time.Millisecond), settle)

	// No record now: no wait.
	start := time.Now()
	if _, err := controller.Recover(ctx, o); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= settle {
		t.Errorf("recover without a loss record waited %s", took)
	}
}

// TestLeaderRecoversOnceTheLossSettled: with redis.recover_on_loss the
// leader finds the loss at once, but rebuilds only once the record is
// RecoverSettle old, then once.
func TestLeaderRecoversOnceTheLossSettled(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	const settle = 500 * time.Millisecond
	var calls atomic.Int32
	opts := fastOptions("a")
	opts.Logger = quiet
	opts.RecoverSettle = settle
	opts.RecoverLost = func(context.Context) error { calls.Add(1); return nil }
	ctl, err := controller.New(store, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctl.Tick(ctx)
	if !ctl.Leader() {
		t.Fatal("the only controller does not lead")
	}
	testenv.DeleteNamespace(rdb, ns)
	ctl.Tick(ctx)
	loss := ctl.DataLoss()
	if loss == nil {
		t.Fatal("the leader did not find the loss")
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("recovered %d times as the loss was found, want none before it is %s old", n, settle)
	}
	for time.Since(loss.At) < settle {
		ctl.Tick(ctx)
		if n := calls.Load(); n != 0 && time.Since(loss.At) < settle {
			t.Fatalf("recovered %s after the loss, before it was %s old", time.Since(loss.At), settle)
		}
		time.Sleep(50 * time.Millisecond)
	}
	ctl.Tick(ctx)
	ctl.Tick(ctx)
	if n := calls.Load(); n != 1 {
		t.Fatalf("recovered %d times once the loss settled, want 1", n)
	}
}
