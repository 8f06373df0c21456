package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/checkpoints"
)

// TestSimulateTakesTheMeasuredCheckpointOverhead: with upload times
// recorded in Redis, --checkpoint-overhead measured simulates their p90
// (and measured-median their median): the results equal those of that
// duration given by hand, and differ from a short overhead's. Without any
// recorded upload it is a clear error.
func TestSimulateTakesTheMeasuredCheckpointOverhead(t *testing.T) {
	rdb, ns := testenv.Redis(t)
	path := filepath.Join(t.TempDir(), "ballast.yaml")
	yaml := fmt.Sprintf(`namespace: %s
redis: {addr: %s}
pools:
  fixed: {kind: fixed, slots: 4, price_per_slot_hour: 1.0}
  spot: {kind: spot, price_per_slot_hour: 1.2, billing: per_second, startup_delay: 3s, idle_ttl: 15s, max_workers: 40, slots_per_worker: 1}
`, ns, testenv.RedisAddr())
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	sim := func(overhead string) (int, string, string) {
		return run(t, "simulate", "--config", path, "--synthetic", "300", "--seed", "3", "--tune=false",
			"--spot-reclaim-rate", "2", "--checkpoint-overhead", overhead, "-o", "json")
	}
	if code, _, errOut := sim("measured"); code != 1 || !strings.Contains(errOut, "no checkpoint upload is recorded") {
		t.Fatalf("nothing recorded: code %d: %s", code, errOut)
	}
	if code, _, errOut := sim("sometimes"); code != 2 || !strings.Contains(errOut, "measured-median") {
		t.Fatalf("a bad value: code %d: %s", code, errOut)
	}

	store := checkpoints.New(queues.NewStore(rdb, queues.StoreOptions{Namespace: ns}))
	ctx := context.Background()
	// Thirty uploads of 1 s to 30 s, in shuffled order: p90 is 27 s, the
	// median 15 s.
	for i := range 30 {
		if err := store.RecordUpload(ctx, time.Duration((i*7)%30+1)*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	code, measured, errOut := sim("measured")
	if code != 0 || !strings.Contains(errOut, "checkpoint overhead 27s: the p90 of the 30 newest") {
		t.Fatalf("measured: code %d: %s", code, errOut)
	}
	t.Logf("%s", strings.TrimSpace(errOut))
	_, byHand, _ := sim("27s")
	if measured != byHand {
		t.Errorf("measured and 27s given by hand simulate differently:\n%s\n---\n%s", measured, byHand)
	}
	if _, short, _ := sim("1s"); short == byHand {
		t.Errorf("a 1s and a 27s overhead simulate alike: the flag does not reach the simulator")
	}
	if code, _, errOut := sim("measured-median"); code != 0 || !strings.Contains(errOut, "checkpoint overhead 15s: the median") {
		t.Errorf("measured-median: code %d: %s", code, errOut)
	}
}
