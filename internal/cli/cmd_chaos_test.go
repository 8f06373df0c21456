package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/queues"
)

// TestChaosSpotNoticeIsRecordedOnlyForSpotWorkers: the command refuses an
// unknown or non-spot worker, naming the problem, and records the notice
// for a spot worker even when the wake-up cannot be sent.
func TestChaosSpotNoticeIsRecordedOnlyForSpotWorkers(t *testing.T) {
	f := newFlowEnv(t, unreachableNATS)
	ctx := context.Background()
	for _, w := range []queues.WorkerInfo{{ID: "fixed-1", Pool: "fixed"}, {ID: "spot-1", Pool: "spot", Spot: true}} {
		if _, err := f.store.Register(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, errOut := run(t, "chaos", "spot-notice", "--config", f.path, "nobody"); code != 1 || !strings.Contains(errOut, "not registered") {
		t.Fatalf("unknown worker: code %d, %q", code, errOut)
	}
	if code, _, errOut := run(t, "chaos", "spot-notice", "--config", f.path, "fixed-1"); code != 1 || !strings.Contains(errOut, "not in a spot pool") {
		t.Fatalf("fixed worker: code %d, %q", code, errOut)
	}
	if b, _ := f.store.Heartbeat(ctx, queues.WorkerInfo{ID: "fixed-1", Pool: "fixed"}, nil); !b.SpotNotice.IsZero() {
		t.Fatal("a refused notice was recorded")
	}
	code, out, _ := run(t, "chaos", "spot-notice", "--in", "20s", "--config", f.path, "spot-1")
	if code != 0 || !strings.Contains(out, "recorded for spot-1") {
		t.Fatalf("spot worker: code %d, %q", code, out)
	}
	if b, _ := f.store.Heartbeat(ctx, queues.WorkerInfo{ID: "spot-1", Pool: "spot", Spot: true}, nil); b.SpotNotice.IsZero() {
		t.Fatal("the notice was not recorded")
	}
}
