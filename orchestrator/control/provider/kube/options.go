package kube

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The labels the provider puts on every worker pod and selects them by.
const (
	LabelInstallation = "ballast/installation"
	LabelPool         = "ballast/pool"
	LabelInstance     = "ballast/instance"
)

// GPUResource is the extended resource a pod template's GPUs ask for.
const GPUResource corev1.ResourceName = "nvidia.com/gpu"

// Defaults of Options.
const (
	DefaultUnschedulableAfter = 2 * time.Minute
	DefaultSpotNotice         = 2 * time.Minute
	// DefaultKeepEnded is how long an ended instance (stocked out, gone,
	// failed) is still listed: the controller reads it at its next ticks
	// and closes its launch.
	DefaultKeepEnded = 10 * time.Minute
	// DefaultSyncTimeout bounds the wait for the informers' first list.
	DefaultSyncTimeout = time.Minute
	// createdGrace is how long a pod this provider created is listed from
	// memory before the informer has seen it.
	createdGrace = time.Minute
)

// DefaultInterruptionTaints are the node taints that mean the node is about
// to go: Karpenter's disruption taints (v1 and before), the taint of a
// cordoned (draining) node, the AWS node termination handler's spot
// interruption taint and GKE's impending termination taint.
var DefaultInterruptionTaints = []string{
	"karpenter.sh/disrupted",
	"karpenter.sh/disruption",
	corev1.TaintNodeUnschedulable,
	"aws-node-termination-handler/spot-itn",
	"cloud.google.com/impending-node-termination",
}

// PodTemplate is how one pool's worker pods look.
type PodTemplate struct {
	// Image is the worker image; its entrypoint is the ballast binary
	// (the pod passes "worker --config ... --pool P --id ID" as args).
	Image           string
	ImagePullPolicy corev1.PullPolicy
	ServiceAccount  string
	// Resources of the worker container.
	Requests, Limits corev1.ResourceList
	// GPUs is the number of nvidia.com/gpu (request and limit); above 0
	// the worker runs with --gpus auto.
	GPUs          int
	NodeSelector  map[string]string
	NodeAffinity  []corev1.NodeSelectorRequirement
	Tolerations   []corev1.Toleration
	PriorityClass string
	// TerminationGrace is the pod's terminationGracePeriodSeconds, and the
	// grace Release deletes it with: the time the worker has to drain.
	TerminationGrace time.Duration
	Labels           map[string]string
	Annotations      map[string]string
	Env              map[string]string
}

// Options configures a Provider.
type Options struct {
	// Client reaches the cluster (NewClient builds one).
	Client API
	// Namespace is where the worker pods run.
	Namespace string
	// Installation is the Ballast namespace, the value of the
	// ballast/installation label: pods of another installation in the
	// same Kubernetes namespace are not this provider's.
	Installation string
	// ConfigMap holds the Ballast config under ConfigKey; it is mounted at
	// ConfigDir and the worker reads it there.
	ConfigMap string
	ConfigKey string // default "ballast.yaml"
	ConfigDir string // default "/etc/ballast"
	// EnvFromSecret, when set, names a Secret whose keys become the
	// worker's environment (the credentials the config names).
	EnvFromSecret string
	// CheckpointClaim, when set, is a PersistentVolumeClaim mounted at
	// CheckpointDir. LogDir gets an emptyDir.
	CheckpointClaim string
	CheckpointDir   string
	LogDir          string
	// Pools are the pod templates, by pool. Launch refuses other pools.
	Pools map[string]PodTemplate
	// UnschedulableAfter: a pod Pending and unschedulable for longer is a
	// stock-out (default DefaultUnschedulableAfter).
	UnschedulableAfter time.Duration
	// SpotNotice is how long an interruption leaves before the node goes,
	// counted from when the signal appeared (default DefaultSpotNotice).
	SpotNotice time.Duration
	// InterruptionTaints are the node taint keys read as an interruption
	// (default DefaultInterruptionTaints).
	InterruptionTaints []string
	// KeepEnded is how long ended instances are listed (default
	// DefaultKeepEnded).
	KeepEnded time.Duration
	// SyncTimeout bounds New's wait for the first list (default
	// DefaultSyncTimeout).
	SyncTimeout time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logger logs what the provider does to pods; nil discards.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.ConfigKey == "" {
		o.ConfigKey = "ballast.yaml"
	}
	if o.ConfigDir == "" {
		o.ConfigDir = "/etc/ballast"
	}
	if o.UnschedulableAfter == 0 {
		o.UnschedulableAfter = DefaultUnschedulableAfter
	}
	if o.SpotNotice == 0 {
		o.SpotNotice = DefaultSpotNotice
	}
	if o.InterruptionTaints == nil {
		o.InterruptionTaints = DefaultInterruptionTaints
	}
	if o.KeepEnded == 0 {
		o.KeepEnded = DefaultKeepEnded
	}
	if o.SyncTimeout == 0 {
		o.SyncTimeout = DefaultSyncTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

func (o Options) validate() error {
	var errs []error
	if o.Client == nil {
		errs = append(errs, errors.New("no Kubernetes client"))
	}
	if o.Namespace == "" {
		errs = append(errs, errors.New("no namespace for the worker pods"))
	}
	if o.Installation == "" {
		errs = append(errs, errors.New("no installation (the Ballast namespace) to label pods with"))
	}
	if o.ConfigMap == "" {
		errs = append(errs, errors.New("no config map: the worker pods read their config from it"))
	}
	if o.UnschedulableAfter < 0 || o.SpotNotice < 0 || o.KeepEnded < 0 {
		errs = append(errs, errors.New("negative duration"))
	}
	for name, t := range o.Pools {
		if t.Image == "" {
			errs = append(errs, fmt.Errorf("pool %s: no image", name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("provider kubernetes: %w", err)
	}
	return nil
}
