package controller_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/provider"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/usage"
)

// signalRig is a hybrid controller over a spot and an on-demand pool with
// one spot-eligible burst job waiting, and a provider the test scripts.
func signalRig(t *testing.T, t0 time.Time) (*controller.Hybrid, *scriptedProvider, *queues.Store) {
	t.Helper()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	spec := jobs.Spec{Command: []string{"true"}, Class: jobs.ClassBurst, Checkpointable: true, Retryable: true,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}
	if _, err := store.Submit(context.Background(), spec, controller.Router{ElasticManaged: true}.Route(spec)); err != nil {
		t.Fatal(err)
	}
	cfg := policy.DefaultConfig()
	cfg.SpotFallbackAfter = time.Minute
	prov := &scriptedProvider{at: t0, insts: map[string]provider.Instance{}, hidden: map[string]bool{}}
	h := &controller.Hybrid{Store: store, Launches: usage.New(store), Provider: prov, Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Pools: []policy.Pool{
			{Name: "spot", Kind: policy.PoolSpot, Region: "eu", PricePerSlotHour: 1, SlotsPerWorker: 1, MaxWorkers: 4, Billing: policy.BillingPerSecond},
			{Name: "od", Kind: policy.PoolOnDemand, Region: "eu", PricePerSlotHour: 3, SlotsPerWorker: 1, MaxWorkers: 4, Billing: policy.BillingPerSecond},
		}}
	return h, prov, store
}

// scaleUps renders a plan's scale-ups as "pool:count".
func scaleUps(p policy.Plan) []string {
	var out []string
	for _, a := range p.Actions {
		if a.Kind == policy.ScaleUp {
			out = append(out, a.Pool+":"+strconv.Itoa(a.Count))
		}
	}
	return out
}

func tick(t *testing.T, h *controller.Hybrid, at time.Time) policy.Plan {
	t.Helper()
	p, err := h.Tick(context.Background(), at)
	if err != nil {
		t.Fatalf("tick at %s: %v", at, err)
	}
	return p
}

// A launch the provider gives up on for lack of capacity after Launch
// returned (a pod left unschedulable) is a stock-out of its pool: the
// provider has waited already, so the work goes on-demand at once, and spot
// is not asked again for spot_fallback_after. A launch that merely failed is
// tried on spot again: the stock-out is what makes the difference.
func TestStockedOutInstanceFallsBackToAnotherPool(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ended        provider.State
		early, later string // the scale-ups half the fallback time in, and past it
	}{
		{provider.StockedOut, "od:1", ""},
		{provider.Failed, "spot:1", ""},
	} {
		t.Run(string(tc.ended), func(t *testing.T) {
			t0 := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
			h, prov, _ := signalRig(t, t0)
			if got := scaleUps(tick(t, h, t0)); !slices.Equal(got, []string{"spot:1"}) {
				t.Fatalf("first tick scales %v, want spot:1", got)
			}
			// The launch waits half the fallback time, then the provider
			// gives up on it.
			prov.set("i-1", tc.ended)
			at := t0.Add(30 * time.Second)
			prov.at = at
			if got := strings.Join(scaleUps(tick(t, h, at)), ","); got != tc.early {
				t.Fatalf("half the fallback time in, the plan scales %q, want %q", got, tc.early)
			}
			// The stocked-out instance stays listed: it is booked once,
			// and the on-demand launch is on its way.
			at = t0.Add(61 * time.Second)
			prov.at = at
			if got := strings.Join(scaleUps(tick(t, h, at)), ","); got != tc.later {
				t.Fatalf("later the plan scales %q, want %q", got, tc.later)
			}
		})
	}
}

// A stock-out reported long after its launch counts as fallen back at once,
// and its booking still lasts: the next ticks keep going on-demand.
func TestLateStockOutFallsBackAtOnce(t *testing.T) {
	t.Parallel()
	t0 := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	h, prov, _ := signalRig(t, t0)
	tick(t, h, t0)
	prov.at = t0.Add(90 * time.Second)
	// The pod stays Pending: after spot_fallback_after the policy already
	// goes on-demand, as it does for any unfilled launch.
	if got := scaleUps(tick(t, h, t0.Add(90*time.Second))); !slices.Equal(got, []string{"od:1"}) {
		t.Fatalf("an unfilled launch past the fallback scales %v, want od:1", got)
	}
	prov.set("i-1", provider.StockedOut)
	prov.set("i-2", provider.Failed) // the on-demand launch failed: ask again
	at := t0.Add(5 * time.Minute)
	if got := scaleUps(tick(t, h, at)); !slices.Equal(got, []string{"od:1"}) {
		t.Fatalf("a late stock-out scales %v, want od:1 at once", got)
	}
}

// spotWaker records the spot wake-ups the controller sends.
type spotWaker struct{ woken []string }

func (w *spotWaker) Preempted(context.Context, string, string, int) {}
func (w *spotWaker) Drain(context.Context, string)                  {}
func (w *spotWaker) SpotNotice(_ context.Context, id string, within time.Duration) {
	w.woken = append(w.woken, id+" "+within.String())
}

// A reclaim time on a listed instance is a spot notice for its worker: it
// is recorded in the registry, where the worker's heartbeat reads it, and
// the worker is woken once. An on-demand worker is not told.
func TestReclaimTimeBecomesASpotNotice(t *testing.T) {
	t.Parallel()
	t0 := time.Now().Truncate(time.Millisecond)
	h, prov, store := signalRig(t, t0)
	waker := &spotWaker{}
	h.Control = waker
	ctx := context.Background()
	tick(t, h, t0)
	prov.mu.Lock()
	prov.insts["od-1"] = provider.Instance{ID: "od-1", Pool: "od", State: provider.Running, LaunchedAt: t0, ReclaimAt: t0.Add(time.Minute)}
	prov.mu.Unlock()
	reclaim := t0.Add(2 * time.Minute)
	prov.mu.Lock()
	inst := prov.insts["i-1"]
	inst.State, inst.ReclaimAt = provider.Running, reclaim
	prov.insts["i-1"] = inst
	prov.mu.Unlock()

	// Not registered yet: nothing to tell, and it is tried again.
	tick(t, h, t0.Add(time.Second))
	if len(waker.woken) != 0 {
		t.Fatalf("woke %v before any worker registered", waker.woken)
	}
	for _, w := range []queues.WorkerInfo{{ID: "i-1", Pool: "spot", Slots: 1, Spot: true}, {ID: "od-1", Pool: "od", Slots: 1}} {
		if _, err := store.Heartbeat(ctx, w, nil); err != nil {
			t.Fatal(err)
		}
	}
	tick(t, h, t0.Add(time.Minute))
	tick(t, h, t0.Add(61*time.Second))
	if want := []string{"i-1 1m0s"}; !slices.Equal(waker.woken, want) {
		t.Fatalf("woken %v, want %v (once, and only the spot worker)", waker.woken, want)
	}
	// The registry answers the workers' next beats with the notice.
	for _, w := range []queues.WorkerInfo{{ID: "i-1", Pool: "spot", Slots: 1, Spot: true}, {ID: "od-1", Pool: "od", Slots: 1}} {
		b, err := store.Heartbeat(ctx, w, nil)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case w.ID == "i-1" && !b.SpotNotice.Equal(reclaim):
			t.Errorf("i-1's spot notice %s, want %s", b.SpotNotice, reclaim)
		case w.ID == "od-1" && !b.SpotNotice.IsZero():
			t.Errorf("od-1 got a spot notice %s", b.SpotNotice)
		}
	}
}
