package kube_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/provider"
	"github.com/ballastdev/ballast/orchestrator/control/provider/kube"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/usage"
)

// hybridOver is the controller's capacity loop over a real Redis and the
// Kubernetes provider p, with a spot GPU pool and an on-demand pool, and
// one spot-eligible burst job waiting.
func hybridOver(t *testing.T, store *queues.Store, p provider.Provider) *controller.Hybrid {
	t.Helper()
	cfg := policy.DefaultConfig()
	cfg.SpotFallbackAfter = 5 * time.Minute
	return &controller.Hybrid{Store: store, Launches: usage.New(store), Provider: p, Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Pools: []policy.Pool{
			{Name: "spot-gpu", Kind: policy.PoolSpot, Region: "eu", PricePerSlotHour: 1, SlotsPerWorker: 1, MaxWorkers: 4, Billing: policy.BillingPerSecond},
			{Name: "od", Kind: policy.PoolOnDemand, Region: "eu", PricePerSlotHour: 3, SlotsPerWorker: 1, MaxWorkers: 4, Billing: policy.BillingPerSecond},
		}}
}

func newStore(t *testing.T) *queues.Store {
	t.Helper()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	spec := jobs.Spec{Command: []string{"train"}, Class: jobs.ClassBurst, Checkpointable: true, Retryable: true,
		Timeout: jobs.Duration(time.Hour), Grace: jobs.Duration(time.Minute)}
	if _, err := store.Submit(context.Background(), spec, controller.Router{ElasticManaged: true}.Route(spec)); err != nil {
		t.Fatal(err)
	}
	return store
}

// podsByPool counts the worker pods in the API by pool.
func podsByPool(t *testing.T, client kubernetes.Interface) map[string][]string {
	t.Helper()
	list, err := client.CoreV1().Pods(testNS).List(context.Background(), metav1.ListOptions{LabelSelector: "ballast/instance"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, p := range list.Items {
		out[p.Labels["ballast/pool"]] = append(out[p.Labels["ballast/pool"]], p.Name)
	}
	return out
}

// cacheCaughtUp waits until p's informer holds every pod of client as the
// API has it. The tests move an injected clock, past the grace the
// provider gives a pod it created and has not seen yet, in no real time:
// a watch event still on its way would then look like a pod gone.
func cacheCaughtUp(t *testing.T, client kubernetes.Interface, p *kube.Provider) {
	t.Helper()
	eventually(t, "the provider's cache holding every pod as the API has it", func() bool {
		list, err := client.CoreV1().Pods(testNS).List(context.Background(), metav1.ListOptions{LabelSelector: "ballast/instance"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range list.Items {
			cached, ok := p.Cached(list.Items[i].Name)
			if !ok || !equality.Semantic.DeepEqual(cached.Status, list.Items[i].Status) || (cached.DeletionTimestamp == nil) != (list.Items[i].DeletionTimestamp == nil) {
				return false
			}
		}
		return true
	})
}

// A spot pod the scheduler cannot place is, past unschedulable_after, a
// stock-out: the provider deletes it and the controller launches the work's
// worker on-demand, without asking spot again. A restarted controller
// finds the pending pod by label and does not launch a second one.
func TestControllerFallsBackFromUnschedulableSpotPods(t *testing.T) {
	client, c := newFake(t)
	fallbackFromUnschedulable(t, client, c)
}

// fallbackFromUnschedulable is the scenario of
// TestControllerFallsBackFromUnschedulableSpotPods over client.
func fallbackFromUnschedulable(t *testing.T, client kubernetes.Interface, c *clock) {
	store := newStore(t)
	p := newProvider(t, client, c)
	h := hybridOver(t, store, p)
	ctx := context.Background()
	tick := func(h *controller.Hybrid) {
		t.Helper()
		if _, err := h.Tick(ctx, c.Now()); err != nil {
			t.Fatal(err)
		}
		cacheCaughtUp(t, client, p)
	}
	tick(h)
	spot := podsByPool(t, client)["spot-gpu"]
	if len(spot) != 1 {
		t.Fatalf("first tick: pods %v, want one spot pod", podsByPool(t, client))
	}
	setStatus(t, client, spot[0], unschedulable(c.Now()))
	cacheCaughtUp(t, client, p)

	// A controller restart: a new provider and loop find the pod by label
	// and count it as capacity on its way.
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p = newProvider(t, client, c)
	h = hybridOver(t, store, p)
	c.Add(time.Minute)
	tick(h)
	if got := podsByPool(t, client); len(got["spot-gpu"]) != 1 || len(got["od"]) != 0 {
		t.Fatalf("after a restart: pods %v, want the one spot pod still pending", got)
	}

	c.Add(90 * time.Second) // 2m30s unschedulable: past the 2m default
	tick(h)
	got := podsByPool(t, client)
	if len(got["spot-gpu"]) != 0 || len(got["od"]) != 1 {
		t.Fatalf("after the stock-out: pods %v, want the spot pod deleted and one on-demand pod", got)
	}
	// The stock-out keeps spot out: later ticks launch nothing more.
	c.Add(time.Minute)
	tick(h)
	if again := podsByPool(t, client); len(again["spot-gpu"]) != 0 || len(again["od"]) != 1 {
		t.Fatalf("a tick later: pods %v", again)
	}
}

// A spot interruption taint on the node of a running spot worker becomes
// a spot notice in the worker registry, where the worker's heartbeat reads
// it and checkpoints its jobs before the node goes.
func TestControllerTurnsATaintIntoASpotNotice(t *testing.T) {
	store := newStore(t)
	client, c := newFake(t)
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := newProvider(t, client, c)
	h := hybridOver(t, store, p)
	if _, err := h.Tick(ctx, c.Now()); err != nil {
		t.Fatal(err)
	}
	id := podsByPool(t, client)["spot-gpu"][0]
	setStatus(t, client, id, running("node-a", c.Now()))
	worker := queues.WorkerInfo{ID: id, Pool: "spot-gpu", Slots: 1, Spot: true}
	if _, err := store.Heartbeat(ctx, worker, nil); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Minute)
	tainted := c.Now()
	node.Spec.Taints = []corev1.Taint{{Key: "aws-node-termination-handler/spot-itn", Effect: corev1.TaintEffectNoSchedule,
		TimeAdded: &metav1.Time{Time: tainted}}}
	if _, err := client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := tainted.Add(2 * time.Minute)
	eventually(t, "a spot notice for the worker", func() bool {
		if _, err := h.Tick(ctx, c.Now()); err != nil {
			t.Fatal(err)
		}
		b, err := store.Heartbeat(ctx, worker, nil)
		if err != nil {
			t.Fatal(err)
		}
		return b.SpotNotice.Equal(want)
	})
}
