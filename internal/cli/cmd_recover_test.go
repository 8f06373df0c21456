package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/queues"
)

// lossEnv is a flow environment on an in-process NATS server whose event
// stream exists and is empty.
func lossEnv(t *testing.T) (flowEnv, jetstream.JetStream) {
	t.Helper()
	srv := testenv.NATS(t)
	f := newFlowEnv(t, srv.ClientURL())
	js, err := jetstream.New(testenv.NATSConn(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := eventbus.EnsureStream(ctx, js, f.cfg.NATS.Stream, subjects(f.cfg), time.Hour); err != nil {
		t.Fatal(err)
	}
	return f, js
}

// TestStatusFirstStartReportsNoLoss: an empty Redis namespace and an empty
// event stream are a first start, not a loss: status exits 0 and says
// nothing of lost data.
func TestStatusFirstStartReportsNoLoss(t *testing.T) {
	f, _ := lossEnv(t)
	code, out, errOut := run(t, "status", "--config", f.path)
	if code != 0 || strings.Contains(out, "DATA LOSS") || strings.Contains(errOut, "lost its data") {
		t.Fatalf("status on a first start: code %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = run(t, "status", "--config", f.path, "-o", "json")
	if code != 0 || strings.Contains(out, `"data_loss"`) {
		t.Fatalf("status -o json on a first start: code %d\n%s", code, out)
	}
}

// TestStatusSaysRedisLostItsData: while a loss record stands, status says
// when Redis lost its data, how to fix it, and exits non-zero; recover
// --ack removes the record and status is clean again.
func TestStatusSaysRedisLostItsData(t *testing.T) {
	f, _ := lossEnv(t)
	ctx := context.Background()
	at := time.Date(2026, 12, 6, 17, 30, 0, 0, time.UTC)
	if ok, err := f.store.RecordDataLoss(ctx, queues.DataLoss{At: at, LastSeen: at.Add(-time.Second), Reason: queues.LossGone,
		Detail: "the namespace's epoch is gone", By: "controller a"}); !ok || err != nil {
		t.Fatalf("RecordDataLoss: %v %v", ok, err)
	}
	code, out, errOut := run(t, "status", "--config", f.path)
	want := "DATA LOSS: Redis lost its data at 2026-12-06T17:30:00Z (last seen whole at 2026-12-06T17:29:59Z)"
	if code == 0 || !strings.Contains(out, want) || !strings.Contains(out, "ballast recover") || !strings.Contains(errOut, "Redis lost its data") {
		t.Fatalf("status with a loss: code %d, want non-zero and %q\n%s\n%s", code, want, out, errOut)
	}
	code, out, _ = run(t, "status", "--config", f.path, "-o", "json")
	if code == 0 || !strings.Contains(out, `"data_loss": {`) || !strings.Contains(out, `"reason": "epoch_gone"`) {
		t.Fatalf("status -o json with a loss: code %d\n%s", code, out)
	}
	code, out, errOut = run(t, "recover", "--config", f.path, "--ack")
	if code != 0 || !strings.Contains(out, "acknowledged: Redis lost its data at 2026-12-06T17:30:00Z") {
		t.Fatalf("recover --ack: code %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := run(t, "status", "--config", f.path); code != 0 || strings.Contains(out, "DATA LOSS") {
		t.Fatalf("status after the ack: code %d\n%s", code, out)
	}
}

// TestStatusSeesALossNoProcessRecorded: Redis holds nothing of the
// namespace (no controller ran since it came back empty) but the event
// stream holds a job's events: status says the data is lost.
func TestStatusSeesALossNoProcessRecorded(t *testing.T) {
	f, js := lossEnv(t)
	ctx := context.Background()
	nc := js.Conn()
	ev := events.Event{ID: events.NewID(), Type: events.TypeJobQueued, JobID: "j1", Attempt: 1, Time: time.Now()}
	if err := eventbus.NewNATSPublisher(nc, subjects(f.cfg)).Publish(ctx, ev); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, "the event stored", func() bool {
		n, _, err := eventbus.Stored(ctx, js, f.cfg.NATS.Stream)
		return err == nil && n == 1
	})
	code, out, _ := run(t, "status", "--config", f.path)
	if code == 0 || !strings.Contains(out, "DATA LOSS: Redis lost its data at") || !strings.Contains(out, "while no controller ran") {
		t.Fatalf("status on an emptied Redis with history: code %d\n%s", code, out)
	}
}
