package kube

import corev1 "k8s.io/api/core/v1"

// Cached is the informer's copy of the pod name, if it holds one: a test
// that moves an injected clock waits for the cache first, since real time
// hardly moves meanwhile and the grace for pods the cache has not seen is
// measured on that clock.
func (p *Provider) Cached(name string) (*corev1.Pod, bool) {
	pod, err := p.pods.Get(name)
	return pod, err == nil
}
