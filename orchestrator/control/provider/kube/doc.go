// Package kube is the Kubernetes provider of elastic workers: each worker
// is a pod running "ballast worker --pool P --id ID", where ID is the pod's
// name and the provider's instance ID.
//
// Pods carry the labels ballast/installation (the Ballast namespace, so two
// installations can share a cluster namespace), ballast/pool and
// ballast/instance. List reads them from an informer's cache, never from an
// API call per controller tick, so a restarted controller finds its pods
// again by label. Release deletes a pod with its termination grace: the
// kubelet sends SIGTERM, which the worker turns into a drain.
//
// Two signals of the cluster become signals the controller acts on:
//
//   - A pod left Pending with PodScheduled=False, reason Unschedulable, for
//     longer than Options.UnschedulableAfter is deleted and reported as
//     [provider.StockedOut]: the controller books a stock-out of its pool
//     and the policy falls back to another pool, as when a Launch is
//     refused. (A ResourceQuota that refuses the pod is a stock-out at
//     Launch.)
//   - A pod whose node carries an interruption taint (Karpenter's
//     disruption taints, a cordon, the AWS node termination handler's spot
//     taint, GKE's impending termination) or whose DisruptionTarget
//     condition is True gets a [provider.Instance.ReclaimAt]: the
//     controller records a spot notice, and the worker checkpoints and
//     requeues its jobs before the node goes.
package kube
