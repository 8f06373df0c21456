package kube

import (
	"fmt"

	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// NewClient connects to the cluster: through the kubeconfig file at path
// (its context kctx, or its current one), or, with path empty, through the
// service account of the pod this process runs in.
func NewClient(path, kctx string) (corev1client.CoreV1Interface, error) {
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
	cfg.UserAgent = "ballast-controller"
	cs, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("provider kubernetes: client: %w", err)
	}
	return cs, nil
}
