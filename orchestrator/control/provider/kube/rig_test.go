package kube_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/provider"
	"github.com/ballastdev/ballast/orchestrator/control/provider/kube"
)

const testNS = "ballast-test"

// clock is the tests' hand-moved clock.
type clock = testenv.Clock

// templates are a spot GPU pool and an on-demand CPU pool.
func templates() map[string]kube.PodTemplate {
	return map[string]kube.PodTemplate{
		"spot-gpu": {
			Image: "ballast:test", ServiceAccount: "ballast-worker", GPUs: 2,
			Requests:         corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi")},
			NodeSelector:     map[string]string{"gpu": "h100"},
			NodeAffinity:     []corev1.NodeSelectorRequirement{{Key: "karpenter.sh/capacity-type", Operator: corev1.NodeSelectorOpIn, Values: []string{"spot"}}},
			Tolerations:      []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			TerminationGrace: 6 * time.Minute,
			Labels:           map[string]string{"team": "ml"},
			Env:              map[string]string{"NCCL_DEBUG": "WARN"},
		},
		"od": {
			Image: "ballast:test", ServiceAccount: "ballast-worker",
			NodeAffinity:     []corev1.NodeSelectorRequirement{{Key: "karpenter.sh/capacity-type", Operator: corev1.NodeSelectorOpIn, Values: []string{"on-demand"}}},
			TerminationGrace: 90 * time.Second,
		},
	}
}

// newProvider starts a provider over client; it is closed with the test.
func newProvider(t *testing.T, client kubernetes.Interface, c *clock) *kube.Provider {
	t.Helper()
	var api kube.API = fakeAPI{client.CoreV1()}
	if cfg, real := realConfigs[client]; real {
		var err error
		if api, err = kube.NewAPI(cfg); err != nil {
			t.Fatal(err)
		}
	}
	p, err := kube.New(context.Background(), kube.Options{
		Client: api, Namespace: testNS, Installation: "ballast", ConfigMap: "ballast-config",
		EnvFromSecret: "ballast-secrets", CheckpointClaim: "ballast-checkpoints",
		CheckpointDir: "/var/lib/ballast/checkpoints", LogDir: "/var/lib/ballast/logs",
		Pools: templates(), Now: c.Now, SyncTimeout: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// newFake is a fake clientset that, like an API server, stamps a pod's
// creation time (on the test's clock) when it is created.
func newFake(t *testing.T) (*fake.Clientset, *clock) {
	t.Helper()
	c := testenv.NewClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	client := fake.NewClientset()
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if pod, ok := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod); ok {
			pod.CreationTimestamp = metav1.NewTime(c.Now())
		}
		return false, nil, nil
	})
	return client, c
}

// listed returns the instance id as List reports it (ok false: absent).
func listed(t *testing.T, p *kube.Provider, id string) (provider.Instance, bool) {
	t.Helper()
	insts, err := p.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range insts {
		if in.ID == id {
			return in, true
		}
	}
	return provider.Instance{}, false
}

// eventually waits for what the informer has not delivered yet.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, what, cond)
}

// setStatus writes a pod's status as the kubelet or scheduler would.
func setStatus(t *testing.T, client kubernetes.Interface, name string, change func(*corev1.Pod)) {
	t.Helper()
	ctx := context.Background()
	pod, err := client.CoreV1().Pods(testNS).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	change(pod)
	if _, err := client.CoreV1().Pods(testNS).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// unschedulable marks a pod Pending and unplaceable since at.
func unschedulable(at time.Time) func(*corev1.Pod) {
	return func(pod *corev1.Pod) {
		pod.Status.Phase = corev1.PodPending
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
			LastTransitionTime: metav1.NewTime(at)}}
	}
}

// running marks a pod Running on node since at.
func running(node string, at time.Time) func(*corev1.Pod) {
	return func(pod *corev1.Pod) {
		pod.Spec.NodeName = node
		pod.Status.Phase = corev1.PodRunning
		pod.Status.StartTime = &metav1.Time{Time: at}
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at)}}}}
	}
}
