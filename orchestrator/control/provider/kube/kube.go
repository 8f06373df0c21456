package kube

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/ballastdev/ballast/orchestrator/control/provider"
)

// Provider runs elastic workers as pods. It is safe for concurrent use.
type Provider struct {
	opts Options
	log  *slog.Logger

	pods  corelisters.PodNamespaceLister
	nodes corelisters.NodeLister
	stop  chan struct{}
	done  sync.WaitGroup

	mu sync.Mutex
	// created are the pods this provider created in the last minute, by
	// name: listed from here until the informer has seen them.
	created map[string]provider.Instance
	// ended are instances that ended while this provider watched (stocked
	// out, deleted), listed until KeepEnded has passed.
	ended map[string]ended
	// deleting are pods a delete was sent for (release, stock-out, reap),
	// so each is deleted once.
	deleting map[string]bool
	// firstSeen is when a signal without a time of its own (an
	// unschedulable pod without a transition time, a taint without
	// timeAdded) was first seen, by pod or node and signal.
	firstSeen map[string]time.Time
	closed    bool
}

type ended struct {
	inst provider.Instance
	at   time.Time
}

var _ provider.Provider = (*Provider)(nil)

// New starts the pod and node informers and waits for their first list, so
// List answers from a full cache at once. The informers run until Close.
func New(ctx context.Context, opts Options) (*Provider, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	p := &Provider{opts: opts, log: opts.Logger.With("provider", "kubernetes"), stop: make(chan struct{}),
		created: map[string]provider.Instance{}, ended: map[string]ended{}, deleting: map[string]bool{},
		firstSeen: map[string]time.Time{}}
	// Informers built by hand over the API alone: the shared informer
	// factory would link every API group into the binary.
	// Resync 0: the cache follows the watch; nothing needs replaying.
	api, ns, sel := opts.Client, opts.Namespace, p.selector()
	podLW := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, lo metav1.ListOptions) (runtime.Object, error) {
			lo.LabelSelector = sel
			return api.ListPods(ctx, ns, lo)
		},
		WatchFuncWithContext: func(ctx context.Context, lo metav1.ListOptions) (watch.Interface, error) {
			lo.LabelSelector = sel
			return api.WatchPods(ctx, ns, lo)
		},
	}
	nodeLW := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, lo metav1.ListOptions) (runtime.Object, error) {
			return api.ListNodes(ctx, lo)
		},
		WatchFuncWithContext: func(ctx context.Context, lo metav1.ListOptions) (watch.Interface, error) {
			return api.WatchNodes(ctx, lo)
		},
	}
	// A client that cannot stream its initial list (a fake) says so, and
	// the reflector lists instead.
	podInf := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(podLW, opts.Client), &corev1.Pod{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	nodeInf := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(nodeLW, opts.Client), &corev1.Node{}, 0, cache.Indexers{})
	p.pods = corelisters.NewPodLister(podInf.GetIndexer()).Pods(opts.Namespace)
	p.nodes = corelisters.NewNodeLister(nodeInf.GetIndexer())
	if _, err := podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: p.podDeleted}); err != nil {
		return nil, fmt.Errorf("provider kubernetes: watch pods: %w", err)
	}
	for _, inf := range []cache.SharedIndexInformer{podInf, nodeInf} {
		p.done.Add(1)
		go func() {
			defer p.done.Done()
			inf.Run(p.stop)
		}()
	}
	sctx, cancel := context.WithTimeout(ctx, opts.SyncTimeout)
	defer cancel()
	if !cache.WaitForCacheSync(sctx.Done(), podInf.HasSynced, nodeInf.HasSynced) {
		_ = p.Close()
		return nil, fmt.Errorf("provider kubernetes: pods and nodes in namespace %s not listed within %v (can the controller's service account list and watch pods there, and nodes? see deploy/kubernetes/rbac.yaml)",
			opts.Namespace, opts.SyncTimeout)
	}
	return p, nil
}

// podDeleted keeps a pod that vanished listed as Gone for a while, so the
// controller sees it end; one already kept as stocked out stays so.
func (p *Provider) podDeleted(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	now := p.opts.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.deleting, pod.Name)
	delete(p.created, pod.Name)
	if _, kept := p.ended[pod.Name]; kept {
		return
	}
	inst := p.instance(pod, now)
	if inst.State.Live() {
		inst.State = provider.Gone
	}
	p.ended[pod.Name] = ended{inst: inst, at: now}
}

// Launch creates n pods of pool. A pod the API refuses for a full
// ResourceQuota is a stock-out (reported at once, so the policy falls back);
// any other refusal is a launch failure. The pods created before a refusal
// are returned with the error.
func (p *Provider) Launch(ctx context.Context, pool string, n int) ([]provider.Instance, error) {
	if pool == "" || n < 0 {
		return nil, fmt.Errorf("provider kubernetes: launch %d of pool %q: need a pool and a count >= 0", n, pool)
	}
	t, ok := p.opts.Pools[pool]
	if !ok {
		return nil, &provider.LaunchError{Provider: "kubernetes", Pool: pool, Requested: n, Attempts: 1, Kind: provider.ErrLaunchFailed,
			Detail: "no pod template for this pool (add it under provider.kubernetes.pools)"}
	}
	if err := p.checkOpen(); err != nil {
		return nil, err
	}
	var out []provider.Instance
	for range n {
		id, err := newID(pool)
		if err != nil {
			return out, err
		}
		now := p.opts.Now()
		pod, err := p.opts.Client.CreatePod(ctx, p.podFor(pool, id, t))
		if err != nil {
			kind := provider.ErrLaunchFailed
			if isQuotaRefusal(err) {
				kind = provider.ErrStockOut
			}
			lerr := &provider.LaunchError{Provider: "kubernetes", Pool: pool, Requested: n, Started: len(out), Attempts: 1, Kind: kind, Cause: err}
			p.log.Warn("worker pod not created", "pool", pool, "err", lerr)
			return out, lerr
		}
		inst := provider.Instance{ID: pod.Name, Pool: pool, State: provider.Launching, LaunchedAt: now}
		p.mu.Lock()
		p.created[pod.Name] = inst
		p.mu.Unlock()
		out = append(out, inst)
	}
	return out, nil
}

// isQuotaRefusal reports a create refused because a ResourceQuota is full:
// the namespace has no room, which is a stock-out, not a failure to retry.
func isQuotaRefusal(err error) bool {
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota")
}

// newID names a new worker: its pool (as a DNS label: '_' becomes '-') and
// a random suffix, so IDs never repeat across controller restarts.
func newID(pool string) (string, error) {
	var b [5]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("provider kubernetes: instance ID: %w", err)
	}
	return strings.ReplaceAll(pool, "_", "-") + "-" + hex.EncodeToString(b[:]), nil
}

// Release deletes the worker's pod with its termination grace: the kubelet
// sends SIGTERM, the worker drains (stops taking work, lets jobs finish or
// checkpoints them) and is killed once the grace is over. A pod that is
// gone already, or being deleted, is not an error.
func (p *Provider) Release(ctx context.Context, id string) error {
	if id == "" {
		return errors.New("provider kubernetes: release: empty instance ID")
	}
	if err := p.checkOpen(); err != nil {
		return err
	}
	p.mu.Lock()
	if p.deleting[id] {
		p.mu.Unlock()
		return nil
	}
	p.mu.Unlock()
	var grace *int64
	pod, err := p.pods.Get(id)
	switch {
	case err == nil && pod.DeletionTimestamp != nil:
		return nil
	case err == nil:
		grace = pod.Spec.TerminationGracePeriodSeconds
	default:
		// Not in the cache yet (created a moment ago) or unknown: delete
		// by name with the pool's grace, if it is ours at all.
		p.mu.Lock()
		inst, ours := p.created[id]
		p.mu.Unlock()
		if !ours {
			return nil
		}
		g := int64(p.opts.Pools[inst.Pool].TerminationGrace.Seconds())
		grace = &g
	}
	if err := p.delete(ctx, id, grace); err != nil {
		return fmt.Errorf("provider kubernetes: release %s: %w", id, err)
	}
	return nil
}

// delete deletes a pod once, with grace (nil: the pod's own). A pod that is
// not there is not an error.
func (p *Provider) delete(ctx context.Context, name string, grace *int64) error {
	p.mu.Lock()
	p.deleting[name] = true
	p.mu.Unlock()
	err := p.opts.Client.DeletePod(ctx, p.opts.Namespace, name, metav1.DeleteOptions{GracePeriodSeconds: grace})
	if err != nil && !apierrors.IsNotFound(err) {
		p.mu.Lock()
		delete(p.deleting, name) // try again next time
		p.mu.Unlock()
		return err
	}
	return nil
}

func (p *Provider) checkOpen() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return provider.ErrClosed
	}
	return nil
}

// Close stops the informers. The pods keep running: they belong to the
// cluster, and a restarted controller finds them again by label.
func (p *Provider) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	close(p.stop)
	p.done.Wait()
	return nil
}
