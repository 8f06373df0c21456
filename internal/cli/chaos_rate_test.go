package cli

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers"
)

func TestSpotChaosReclaimsOnlyLiveSpotWorkers(t *testing.T) {
	rdb, ns := testenv.Redis(t)
	nc := testenv.NATSConn(t, testenv.NATS(t))
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	cfg := config.Dev()
	cfg.NATS.SubjectPrefix = ns
	ctx := context.Background()
	for _, w := range []queues.WorkerInfo{
		{ID: "fixed-1", Pool: "fixed"}, {ID: "od-1", Pool: "ondemand"},
		{ID: "spot-1", Pool: "spot", Spot: true}, {ID: "spot-2", Pool: "spot", Spot: true}, {ID: "spot-3", Pool: "spot", Spot: true, Draining: true},
	} {
		if _, err := store.Heartbeat(ctx, w, nil); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var got []string
	sub, err := nc.Subscribe(subjects(cfg).Control("*"), func(m *nats.Msg) {
		var msg workers.ControlMessage
		if json.Unmarshal(m.Data, &msg) == nil && msg.Action == workers.ControlSpotNotice && msg.NoticeSeconds == 10 {
			mu.Lock()
			got = append(got, m.Subject)
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	nc.Flush()
	c := &spotChaos{perHour: 1e6, notice: 10 * time.Second, every: time.Minute, rng: rand.New(rand.NewPCG(1, 2)),
		nc: nc, store: store, cfg: cfg, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	c.round(ctx)
	want := []string{subjects(cfg).Control("spot-1"), subjects(cfg).Control("spot-2")}
	testenv.Eventually(t, 2*time.Second, "two spot notices", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == 2
	})
	mu.Lock()
	sort.Strings(got)
	mu.Unlock()
	if got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("notices to %v, want %v", got, want)
	}
	// Each wake-up follows a recorded notice, which the worker's beat reads.
	for _, id := range []string{"spot-1", "spot-2"} {
		if b, err := store.Heartbeat(ctx, queues.WorkerInfo{ID: id, Pool: "spot", Spot: true}, nil); err != nil || b.SpotNotice.IsZero() {
			t.Fatalf("%s: no spot notice recorded (%v)", id, err)
		}
	}
	// A zero rate never reclaims: one round, then a flush round trip, which
	// any notice it had sent would have preceded.
	c.perHour = 0
	c.round(ctx)
	nc.Flush()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("zero rate reclaimed: %v", got)
	}
}
