package kube_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ballastdev/ballast/orchestrator/control/provider"
	"github.com/ballastdev/ballast/orchestrator/control/provider/kube"
)

// Launch creates one pod per worker, from the pool's template, labelled so
// List finds it again, running the worker under the instance's ID.
func TestLaunchCreatesTheWorkerPod(t *testing.T) {
	client, c := newFake(t)
	p := newProvider(t, client, c)
	ctx := context.Background()
	insts, err := p.Launch(ctx, "spot-gpu", 2)
	if err != nil || len(insts) != 2 || insts[0].ID == insts[1].ID {
		t.Fatalf("Launch = %+v, %v; want two instances with distinct IDs", insts, err)
	}
	in := insts[0]
	if in.Pool != "spot-gpu" || in.State != provider.Launching || !in.LaunchedAt.Equal(c.Now()) || !strings.HasPrefix(in.ID, "spot-gpu-") {
		t.Fatalf("instance %+v", in)
	}
	pod, err := client.CoreV1().Pods(testNS).Get(ctx, in.ID, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"ballast/installation": "ballast", "ballast/pool": "spot-gpu", "ballast/instance": in.ID,
		"app.kubernetes.io/name": "ballast", "app.kubernetes.io/component": "worker", "team": "ml"} {
		if pod.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, pod.Labels[k], v)
		}
	}
	s := pod.Spec
	if len(s.Containers) != 1 {
		t.Fatalf("%d containers", len(s.Containers))
	}
	w := s.Containers[0]
	wantArgs := []string{"worker", "--config", "/etc/ballast/ballast.yaml", "--pool", "spot-gpu", "--id", in.ID, "--gpus", "auto"}
	if w.Image != "ballast:test" || !slices.Equal(w.Args, wantArgs) {
		t.Errorf("container %s %v, want ballast:test %v", w.Image, w.Args, wantArgs)
	}
	gpu := w.Resources.Limits[kube.GPUResource]
	cpu := w.Resources.Requests[corev1.ResourceCPU]
	mem := w.Resources.Requests[corev1.ResourceMemory]
	if gpu.Value() != 2 || cpu.String() != "8" || mem.String() != "32Gi" {
		t.Errorf("resources %v, want nvidia.com/gpu 2, cpu 8, memory 32Gi", w.Resources)
	}
	if greq := w.Resources.Requests[kube.GPUResource]; greq.Value() != 2 {
		t.Errorf("gpu request %v, want 2 (extended resources need request = limit)", greq)
	}
	if s.TerminationGracePeriodSeconds == nil || *s.TerminationGracePeriodSeconds != 360 {
		t.Errorf("terminationGracePeriodSeconds %v, want 360", s.TerminationGracePeriodSeconds)
	}
	if s.ServiceAccountName != "ballast-worker" || s.RestartPolicy != corev1.RestartPolicyNever || s.NodeSelector["gpu"] != "h100" {
		t.Errorf("service account %q, restart %q, node selector %v", s.ServiceAccountName, s.RestartPolicy, s.NodeSelector)
	}
	aff := s.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(aff) != 1 || len(aff[0].MatchExpressions) != 1 || aff[0].MatchExpressions[0].Key != "karpenter.sh/capacity-type" ||
		!slices.Equal(aff[0].MatchExpressions[0].Values, []string{"spot"}) {
		t.Errorf("node affinity %+v, want capacity-type In [spot]", aff)
	}
	if len(s.Tolerations) != 1 || s.Tolerations[0].Key != "nvidia.com/gpu" {
		t.Errorf("tolerations %+v", s.Tolerations)
	}
	if len(w.EnvFrom) != 1 || w.EnvFrom[0].SecretRef.Name != "ballast-secrets" || len(w.Env) != 1 || w.Env[0].Name != "NCCL_DEBUG" {
		t.Errorf("env %+v from %+v", w.Env, w.EnvFrom)
	}
	mounts := map[string]string{}
	for _, m := range w.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	vols := map[string]corev1.Volume{}
	for _, v := range s.Volumes {
		vols[v.Name] = v
	}
	if mounts["config"] != "/etc/ballast" || vols["config"].ConfigMap == nil || vols["config"].ConfigMap.Name != "ballast-config" {
		t.Errorf("config volume %+v at %q", vols["config"], mounts["config"])
	}
	if mounts["checkpoints"] != "/var/lib/ballast/checkpoints" || vols["checkpoints"].PersistentVolumeClaim == nil ||
		vols["checkpoints"].PersistentVolumeClaim.ClaimName != "ballast-checkpoints" {
		t.Errorf("checkpoint volume %+v at %q", vols["checkpoints"], mounts["checkpoints"])
	}

	// The on-demand pool gets its own template: no GPUs, on-demand nodes.
	od, err := p.Launch(ctx, "od", 1)
	if err != nil {
		t.Fatal(err)
	}
	pod, _ = client.CoreV1().Pods(testNS).Get(ctx, od[0].ID, metav1.GetOptions{})
	if args := pod.Spec.Containers[0].Args; slices.Contains(args, "--gpus") || pod.Labels["ballast/pool"] != "od" ||
		pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Values[0] != "on-demand" {
		t.Errorf("on-demand pod: args %v, labels %v, affinity %+v", args, pod.Labels, pod.Spec.Affinity)
	}
	if _, err := p.Launch(ctx, "nope", 1); !errors.Is(err, provider.ErrLaunchFailed) {
		t.Errorf("a pool without a template: %v, want ErrLaunchFailed", err)
	}
}

// A pod goes Launching -> Running with the worker's start time; Release
// deletes it with the pod's termination grace, so the worker drains.
func TestRunningThenReleaseDeletesWithGrace(t *testing.T) {
	client, c := newFake(t)
	p := newProvider(t, client, c)
	ctx := context.Background()
	insts, err := p.Launch(ctx, "od", 1)
	if err != nil {
		t.Fatal(err)
	}
	id := insts[0].ID
	if in, ok := listed(t, p, id); !ok || in.State != provider.Launching {
		t.Fatalf("just launched: %+v %v, want launching (listed before the informer saw it)", in, ok)
	}
	started := c.Now().Add(40 * time.Second)
	setStatus(t, client, id, running("node-a", started))
	eventually(t, "the pod running", func() bool {
		in, _ := listed(t, p, id)
		return in.State == provider.Running && in.StartedAt.Equal(started)
	})

	client.ClearActions()
	if err := p.Release(ctx, id); err != nil {
		t.Fatal(err)
	}
	var deleted bool
	for _, a := range client.Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok && d.Name == id {
			g := d.DeleteOptions.GracePeriodSeconds
			if g == nil || *g != 90 {
				t.Fatalf("deleted with grace %v, want 90 s (the pod's terminationGracePeriodSeconds)", g)
			}
			deleted = true
		}
	}
	if !deleted {
		t.Fatalf("no delete of %s in %v", id, client.Actions())
	}
	// The fake deletes at once; a real API server keeps the pod
	// terminating for its grace. Either way it ends as gone.
	eventually(t, "the released pod gone", func() bool {
		in, ok := listed(t, p, id)
		return ok && in.State == provider.Gone
	})
	if err := p.Release(ctx, id); err != nil {
		t.Fatalf("releasing a gone pod: %v", err)
	}
	c.Add(kube.DefaultKeepEnded)
	if in, ok := listed(t, p, id); ok {
		t.Fatalf("still listed after KeepEnded: %+v", in)
	}
}

// A pod the scheduler cannot place is launching while a cluster
// autoscaler may still add a node; past UnschedulableAfter it is deleted
// and listed as stocked out, which the controller books as a stock-out.
func TestUnschedulablePodBecomesAStockOut(t *testing.T) {
	client, c := newFake(t)
	p := newProvider(t, client, c)
	ctx := context.Background()
	insts, _ := p.Launch(ctx, "spot-gpu", 1)
	id := insts[0].ID
	setStatus(t, client, id, unschedulable(c.Now().Add(5*time.Second)))
	// A provider started now has the status in its cache (New waits for
	// the first list), so what it reports follows from the clock alone;
	// it is also a restarted controller's, which must catch stock-outs of
	// pods launched before it started.
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p = newProvider(t, client, c)
	c.Add(2 * time.Minute) // 1m55s unschedulable: not yet
	if in, _ := listed(t, p, id); in.State != provider.Launching {
		t.Fatalf("after 1m55s unschedulable: %s, want launching", in.State)
	}
	if _, err := client.CoreV1().Pods(testNS).Get(ctx, id, metav1.GetOptions{}); err != nil {
		t.Fatalf("pod deleted before unschedulable_after: %v", err)
	}
	c.Add(5 * time.Second)
	in, ok := listed(t, p, id)
	if !ok || in.State != provider.StockedOut || in.Pool != "spot-gpu" || !strings.Contains(in.Err, "Insufficient nvidia.com/gpu") {
		t.Fatalf("after 2m unschedulable: %+v %v, want stocked_out with the scheduler's reason", in, ok)
	}
	if _, err := client.CoreV1().Pods(testNS).Get(ctx, id, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the stocked-out pod is still there: %v", err)
	}
	// Still reported as stocked out once the informer saw the delete.
	eventually(t, "the delete seen", func() bool {
		in, ok := listed(t, p, id)
		return ok && in.State == provider.StockedOut
	})
}

// A pod Pending for lack of an image, or scheduled and starting, is no
// stock-out however long it takes.
func TestOnlyUnschedulablePodsStockOut(t *testing.T) {
	client, c := newFake(t)
	p := newProvider(t, client, c)
	insts, _ := p.Launch(context.Background(), "od", 2)
	setStatus(t, client, insts[0].ID, func(pod *corev1.Pod) {
		pod.Status.Phase = corev1.PodPending
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
	})
	setStatus(t, client, insts[1].ID, func(pod *corev1.Pod) {
		pod.Status.Phase = corev1.PodPending
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "SchedulingGated"}}
	})
	// The informer's own copies, with the new statuses: List also shows
	// pods only just created, which an hour on the clock forgets if the
	// cache has not caught up by then.
	eventually(t, "the statuses in the cache", func() bool {
		for _, in := range insts {
			pod, ok := p.Cached(in.ID)
			if !ok || pod.Status.Phase != corev1.PodPending || len(pod.Status.Conditions) == 0 {
				return false
			}
		}
		return true
	})
	c.Add(time.Hour)
	for _, in := range insts {
		if got, _ := listed(t, p, in.ID); got.State != provider.Launching {
			t.Errorf("%s: %s, want still launching", in.ID, got.State)
		}
	}
}

// A full ResourceQuota refuses the pod: a stock-out at Launch.
func TestQuotaRefusalIsAStockOut(t *testing.T) {
	client, c := newFake(t)
	p := newProvider(t, client, c)
	calls := 0
	client.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		if calls == 1 {
			return false, nil, nil // the first pod fits
		}
		return true, nil, apierrors.NewForbidden(corev1.Resource("pods"), "x",
			errors.New(`exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=2, used: requests.nvidia.com/gpu=8, limited: requests.nvidia.com/gpu=8`))
	})
	insts, err := p.Launch(context.Background(), "spot-gpu", 3)
	var le *provider.LaunchError
	if len(insts) != 1 || !errors.Is(err, provider.ErrStockOut) || !errors.As(err, &le) || le.Started != 1 {
		t.Fatalf("Launch = %d instances, %v; want 1 and a stock-out", len(insts), err)
	}
	client.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewInternalError(errors.New("etcd timeout"))
	})
	if _, err := p.Launch(context.Background(), "od", 1); !errors.Is(err, provider.ErrLaunchFailed) || errors.Is(err, provider.ErrStockOut) {
		t.Fatalf("a server error: %v, want ErrLaunchFailed only", err)
	}
}

// A restarted controller finds its workers by label, with their pools and
// states, and ignores another installation's pods.
func TestRestartFindsPodsByLabel(t *testing.T) {
	client, c := newFake(t)
	first := newProvider(t, client, c)
	ctx := context.Background()
	a, _ := first.Launch(ctx, "spot-gpu", 1)
	b, _ := first.Launch(ctx, "od", 1)
	setStatus(t, client, a[0].ID, running("node-a", c.Now()))
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := first.List(ctx); !errors.Is(err, provider.ErrClosed) {
		t.Fatalf("List after Close: %v", err)
	}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: testNS,
		Labels: map[string]string{"ballast/installation": "staging", "ballast/pool": "od", "ballast/instance": "theirs"}}}
	if _, err := client.CoreV1().Pods(testNS).Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	again := newProvider(t, client, c) // New waits for the first list
	insts, err := again.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]provider.Instance{}
	for _, in := range insts {
		got[in.ID] = in
	}
	if len(got) != 2 || got[a[0].ID].Pool != "spot-gpu" || got[a[0].ID].State != provider.Running ||
		got[b[0].ID].Pool != "od" || got[b[0].ID].State != provider.Launching {
		t.Fatalf("after a restart: %+v, want the spot pod running and the od pod launching, not the other installation's", insts)
	}
}

// A spot interruption — an interruption taint on the pod's node, a cordon,
// or the pod's DisruptionTarget condition — gives the instance a reclaim
// time: the signal's time plus the notice.
func TestInterruptionSignalsGiveAReclaimTime(t *testing.T) {
	for _, tc := range []struct {
		name   string
		taint  string
		cordon bool
		cond   bool
		want   time.Duration // after the signal; 0: no reclaim
	}{
		{name: "karpenter disrupted", taint: "karpenter.sh/disrupted", want: 2 * time.Minute},
		{name: "karpenter disruption", taint: "karpenter.sh/disruption", want: 2 * time.Minute},
		{name: "aws spot itn", taint: "aws-node-termination-handler/spot-itn", want: 2 * time.Minute},
		{name: "gke impending termination", taint: "cloud.google.com/impending-node-termination", want: 2 * time.Minute},
		{name: "unschedulable taint", taint: corev1.TaintNodeUnschedulable, want: 2 * time.Minute},
		{name: "cordon", cordon: true, want: 2 * time.Minute},
		{name: "disruption target", cond: true, want: 2 * time.Minute},
		{name: "an unrelated taint", taint: "example.com/maintenance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, c := newFake(t)
			ctx := context.Background()
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
			if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			p := newProvider(t, client, c)
			insts, _ := p.Launch(ctx, "spot-gpu", 1)
			id := insts[0].ID
			setStatus(t, client, id, running("node-a", c.Now()))
			eventually(t, "the pod running", func() bool { in, _ := listed(t, p, id); return in.State == provider.Running })
			if in, _ := listed(t, p, id); !in.ReclaimAt.IsZero() {
				t.Fatalf("reclaim %s before any signal", in.ReclaimAt)
			}
			c.Add(time.Minute)
			signal := c.Now().Add(-10 * time.Second) // when the cluster says it happened
			switch {
			case tc.taint != "":
				node.Spec.Taints = []corev1.Taint{{Key: tc.taint, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &metav1.Time{Time: signal}}}
			case tc.cordon:
				node.Spec.Unschedulable = true
				signal = c.Now() // a cordon carries no time: first seen
			}
			if _, err := client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if tc.cond {
				setStatus(t, client, id, func(pod *corev1.Pod) {
					pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget,
						Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler", LastTransitionTime: metav1.NewTime(signal)})
				})
			}
			if tc.want == 0 {
				// A provider started now has the update in its cache.
				fresh := newProvider(t, client, c)
				if in, _ := listed(t, fresh, id); !in.ReclaimAt.IsZero() || in.State != provider.Running {
					t.Fatalf("%s, reclaim %s for an unrelated taint", in.State, in.ReclaimAt)
				}
				return
			}
			want := signal.Add(tc.want)
			eventually(t, "a reclaim time", func() bool {
				in, _ := listed(t, p, id)
				return in.ReclaimAt.Equal(want)
			})
			c.Add(30 * time.Second) // a later look keeps the same deadline
			if in, _ := listed(t, p, id); !in.ReclaimAt.Equal(want) {
				t.Fatalf("reclaim moved to %s, want %s", in.ReclaimAt, want)
			}
		})
	}
}
