package kube_test

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// fakeAPI is the provider's API over client-go's fake clientset (a cluster
// stand-in, not Redis or NATS). The real API (kube.NewAPI) is what
// TestAgainstARealAPIServer uses.
type fakeAPI struct{ core corev1client.CoreV1Interface }

// IsWatchListSemanticsUnSupported says, as the fake clientset does, that it
// cannot stream an initial list, so the informers list instead.
func (fakeAPI) IsWatchListSemanticsUnSupported() bool { return true }

func (f fakeAPI) ListPods(ctx context.Context, ns string, o metav1.ListOptions) (*corev1.PodList, error) {
	return f.core.Pods(ns).List(ctx, o)
}

func (f fakeAPI) WatchPods(ctx context.Context, ns string, o metav1.ListOptions) (watch.Interface, error) {
	return f.core.Pods(ns).Watch(ctx, o)
}

func (f fakeAPI) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	return f.core.Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
}

func (f fakeAPI) DeletePod(ctx context.Context, ns, name string, o metav1.DeleteOptions) error {
	return f.core.Pods(ns).Delete(ctx, name, o)
}

func (f fakeAPI) ListNodes(ctx context.Context, o metav1.ListOptions) (*corev1.NodeList, error) {
	return f.core.Nodes().List(ctx, o)
}

func (f fakeAPI) WatchNodes(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return f.core.Nodes().Watch(ctx, o)
}
