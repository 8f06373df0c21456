package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// API is the part of the Kubernetes API the provider uses: pods in one
// namespace, and nodes. NewClient reaches a cluster; tests adapt client-go's
// fake clientset.
type API interface {
	ListPods(ctx context.Context, namespace string, opts metav1.ListOptions) (*corev1.PodList, error)
	WatchPods(ctx context.Context, namespace string, opts metav1.ListOptions) (watch.Interface, error)
	CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error)
	DeletePod(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error
	ListNodes(ctx context.Context, opts metav1.ListOptions) (*corev1.NodeList, error)
	WatchNodes(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// NewClient connects to the cluster: through the kubeconfig file at path
// (its context kctx, or its current one), or, with path empty, through the
// service account of the pod this process runs in.
func NewClient(path, kctx string) (API, error) {
	var (
		cfg *rest.Config
		err error
	)
	if path == "" {
		cfg, err = rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("provider kubernetes: not running in a pod (%w): set provider.kubernetes.kubeconfig to a kubeconfig file", err)
		}
	} else {
		rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kctx}).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("provider kubernetes: kubeconfig %s: %w", path, err)
		}
	}
	return NewAPI(cfg)
}

// NewAPI is the API over a REST config. It is a REST client of the core
// group with a scheme of the core types alone: client-go's typed clients
// register every API group, which would add about 19 MB to the binary.
func NewAPI(cfg *rest.Config) (API, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("provider kubernetes: scheme: %w", err)
	}
	c := rest.CopyConfig(cfg)
	c.APIPath = "/api"
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = "ballast-controller"
	}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("provider kubernetes: client: %w", err)
	}
	return restAPI{rc: rc, params: runtime.NewParameterCodec(scheme)}, nil
}

type restAPI struct {
	rc     *rest.RESTClient
	params runtime.ParameterCodec
}

func (a restAPI) ListPods(ctx context.Context, ns string, opts metav1.ListOptions) (*corev1.PodList, error) {
	out := &corev1.PodList{}
	err := a.rc.Get().Namespace(ns).Resource("pods").VersionedParams(&opts, a.params).Do(ctx).Into(out)
	return out, err
}

func (a restAPI) WatchPods(ctx context.Context, ns string, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return a.rc.Get().Namespace(ns).Resource("pods").VersionedParams(&opts, a.params).Watch(ctx)
}

func (a restAPI) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	out := &corev1.Pod{}
	err := a.rc.Post().Namespace(pod.Namespace).Resource("pods").Body(pod).Do(ctx).Into(out)
	return out, err
}

func (a restAPI) DeletePod(ctx context.Context, ns, name string, opts metav1.DeleteOptions) error {
	return a.rc.Delete().Namespace(ns).Resource("pods").Name(name).Body(&opts).Do(ctx).Error()
}

func (a restAPI) ListNodes(ctx context.Context, opts metav1.ListOptions) (*corev1.NodeList, error) {
	out := &corev1.NodeList{}
	err := a.rc.Get().Resource("nodes").VersionedParams(&opts, a.params).Do(ctx).Into(out)
	return out, err
}

func (a restAPI) WatchNodes(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return a.rc.Get().Resource("nodes").VersionedParams(&opts, a.params).Watch(ctx)
}
