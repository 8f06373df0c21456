package controller_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/provider"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/queues/usage"
)

// scriptedProvider stands in for a cloud API (not for Redis or NATS): it
// hands out instances launched at a set time and lists the states the test
// gives them.
type scriptedProvider struct {
	mu     sync.Mutex
	at     time.Time
	n      int
	insts  map[string]provider.Instance
	hidden map[string]bool
}

func (p *scriptedProvider) Launch(_ context.Context, pool string, n int) ([]provider.Instance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []provider.Instance
	for range n {
		p.n++
		inst := provider.Instance{ID: fmt.Sprintf("i-%d", p.n), Pool: pool, State: provider.Launching, LaunchedAt: p.at}
		p.insts[inst.ID] = inst
		out = append(out, inst)
	}
	return out, nil
}

func (p *scriptedProvider) set(id string, st provider.State) {
	p.mu.Lock()
	defer p.mu.Unlock()
	inst := p.insts[id]
	inst.State = st
	p.insts[id] = inst
}

func (p *scriptedProvider) hide(id string) { p.mu.Lock(); p.hidden[id] = true; p.mu.Unlock() }

func (p *scriptedProvider) Release(context.Context, string) error { return nil }
func (p *scriptedProvider) Close() error                          { return nil }
func (p *scriptedProvider) List(context.Context) ([]provider.Instance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []provider.Instance
	for id, inst := range p.insts {
		if !p.hidden[id] {
			out = append(out, inst)
		}
	}
	return out, nil
}

// TestLaunchesStartTheirWorkersLivesAndFailedOnesAreBilled: a worker's life
// starts at its launch (the provider bills the boot); a launch that fails,
// or that the provider forgets, is closed as a life of its own, but not
// before the provider has had time to list it.
func TestLaunchesStartTheirWorkersLivesAndFailedOnesAreBilled(t *testing.T) {
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	book := usage.New(store)
	ctx := context.Background()
	t0 := time.Now().Add(-10 * time.Minute).Truncate(time.Millisecond)
	prov := &scriptedProvider{at: t0, insts: map[string]provider.Instance{}, hidden: map[string]bool{}}
	h := &controller.Hybrid{Store: store, Launches: book, Provider: prov, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Pools: []policy.Pool{{Name: "spot", Kind: policy.PoolSpot, SlotsPerWorker: 2, MaxWorkers: 10}}}
	if err := h.Apply(ctx, policy.Plan{Actions: []policy.Action{{Kind: policy.ScaleUp, Pool: "spot", Count: 4}}}, t0); err != nil {
		t.Fatal(err)
	}
	if p, err := book.PendingLaunches(ctx); err != nil || len(p) != 4 || !p[0].At.Equal(t0) || p[0].Slots != 2 {
		t.Fatalf("pending launches %+v %v", p, err)
	}

	// i-1 boots for two minutes, then its worker registers.
	if _, err := store.Heartbeat(ctx, queues.WorkerInfo{ID: "i-1", Pool: "spot", Slots: 2, StartedAt: t0.Add(2 * time.Minute)}, nil); err != nil {
		t.Fatal(err)
	}
	prov.set("i-1", provider.Running)
	prov.set("i-2", provider.Failed) // never booted
	prov.hide("i-3")                 // the provider forgot it long ago
	now := t0.Add(5 * time.Minute)
	// A snapshot only reads: the launches stay open until a tick.
	if _, err := h.Snapshot(ctx, now); err != nil {
		t.Fatal(err)
	}
	if p, err := book.PendingLaunches(ctx); err != nil || len(p) != 3 {
		t.Fatalf("after a snapshot, pending launches %+v %v, want i-2, i-3 and i-4 still open", p, err)
	}
	if _, err := h.Tick(ctx, now); err != nil {
		t.Fatal(err)
	}
	prov.hide("i-4") // forgotten, but the launch is recent: not yet gone
	if _, err := h.Tick(ctx, t0.Add(30*time.Second)); err != nil {
		t.Fatal(err)
	}

	lives, err := book.WorkerLives(ctx, t0.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]usage.WorkerLife{}
	for _, l := range lives {
		got[l.ID] = l
	}
	if l := got["i-1"]; len(lives) != 3 || !l.Start.Equal(t0) || !l.End.IsZero() || l.Slots != 2 {
		t.Fatalf("lives %+v", lives)
	}
	for _, id := range []string{"i-2", "i-3"} {
		if l := got[id]; !l.Start.Equal(t0) || !l.End.Equal(now.Truncate(time.Millisecond)) || l.Pool != "spot" {
			t.Errorf("%s: %+v, want %s → %s", id, l, t0, now)
		}
	}
	if ws, err := registry.New(store).Workers(ctx); err != nil || len(ws) != 1 || !ws[0].BilledFrom.Equal(t0) {
		t.Fatalf("the registry bills i-1 from its launch: %+v %v", ws, err)
	}
	if p, _ := book.PendingLaunches(ctx); len(p) != 1 || p[0].ID != "i-4" {
		t.Fatalf("still pending: %+v", p)
	}
}
