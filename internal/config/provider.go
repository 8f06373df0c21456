package config

import (
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// The provider kinds: who starts and releases elastic workers.
const (
	ProviderNone       = "none"
	ProviderLocal      = "local"
	ProviderExec       = "exec"
	ProviderKubernetes = "kubernetes"
)

// Defaults of the Kubernetes provider.
const (
	DefaultKubeNamespace      = "ballast"
	DefaultKubeServiceAccount = "ballast-worker"
	DefaultKubeConfigMap      = "ballast-config"
	// DefaultUnschedulableAfter is how long a worker pod may stay Pending
	// and unschedulable before it counts as a stock-out: long enough for a
	// cluster autoscaler to add a node (Karpenter takes about a minute).
	DefaultUnschedulableAfter = 2 * time.Minute
	// DefaultSpotNotice is how long a spot interruption leaves before the
	// machine goes, when the signal does not say (AWS gives two minutes).
	DefaultSpotNotice = 2 * time.Minute
	// KubeGraceMargin is added to a worker pod's computed termination
	// grace: the worker deregisters after its last job stops.
	KubeGraceMargin = 30 * time.Second
	// KubeCapacityTypeLabel is the node label the default node affinity
	// reads: Karpenter's, which EKS, AKS and GKE clusters running
	// Karpenter carry.
	KubeCapacityTypeLabel = "karpenter.sh/capacity-type"
	// KubeConfigMountDir is where a worker pod sees the config map; the
	// worker reads ballast.yaml there.
	KubeConfigMountDir = "/etc/ballast"
)

// ProviderConfig chooses the elastic capacity provider. The controller's
// --provider flag, when given, overrides Kind (and the --exec-* flags the
// exec scripts), so one config file serves a dev machine and a cluster.
type ProviderConfig struct {
	// Kind is none (elastic pools are not managed), local (child processes
	// of the controller), exec (operator scripts) or kubernetes (a pod per
	// worker). Default none.
	Kind string `yaml:"kind,omitempty"`
	// Exec holds the exec provider's scripts.
	Exec ExecProviderConfig `yaml:"exec,omitempty"`
	// Kubernetes configures the kubernetes provider.
	Kubernetes KubernetesConfig `yaml:"kubernetes,omitempty"`
}

// ExecProviderConfig names the exec provider's scripts, each an argv (see
// the provider package for the contract).
type ExecProviderConfig struct {
	Launch  []string `yaml:"launch,omitempty"`
	Release []string `yaml:"release,omitempty"`
	List    []string `yaml:"list,omitempty"`
}

// KubernetesConfig is the kubernetes provider: it runs each elastic worker
// as a pod, reads stock-outs from pods the scheduler cannot place and spot
// interruptions from node taints and pod conditions.
type KubernetesConfig struct {
	// Kubeconfig is a kubeconfig file; empty uses the in-cluster service
	// account (the controller runs as a pod).
	Kubeconfig string `yaml:"kubeconfig,omitempty"`
	// Context picks a context of Kubeconfig; empty uses its current one.
	Context string `yaml:"context,omitempty"`
	// Namespace is where worker pods run (default ballast).
	Namespace string `yaml:"namespace,omitempty"`
	// Image is the worker image, which holds the ballast binary and
	// whatever the jobs run. Required; a pool may override it.
	Image string `yaml:"image,omitempty"`
	// ImagePullPolicy is Always, IfNotPresent or Never (default: the
	// cluster's, which depends on the tag).
	ImagePullPolicy string `yaml:"image_pull_policy,omitempty"`
	// ServiceAccount runs the worker pods (default ballast-worker); a pool
	// may override it. Workers need no Kubernetes API access.
	ServiceAccount string `yaml:"service_account,omitempty"`
	// ConfigMap holds this config under the key ballast.yaml; it is
	// mounted read-only at /etc/ballast in every worker pod (default
	// ballast-config, as in deploy/kubernetes/configmap.yaml).
	ConfigMap string `yaml:"config_map,omitempty"`
	// EnvFromSecret names a Secret whose keys become the workers'
	// environment: the credentials the config names with *_env.
	EnvFromSecret string `yaml:"env_from_secret,omitempty"`
	// CheckpointClaim names a PersistentVolumeClaim (ReadWriteMany) mounted
	// at worker.checkpoint_dir: jobs move between workers, so checkpoints
	// must be on storage they all read. Empty mounts nothing there.
	CheckpointClaim string `yaml:"checkpoint_claim,omitempty"`
	// UnschedulableAfter is how long a worker pod may stay Pending with
	// the scheduler unable to place it before the provider deletes it and
	// the controller books a stock-out of its pool (default 2m).
	UnschedulableAfter jobs.Duration `yaml:"unschedulable_after,omitempty"`
	// SpotNotice is how long a spot interruption (a node's interruption
	// taint, a pod's DisruptionTarget condition) leaves before the machine
	// goes, from when it was seen (default 2m).
	SpotNotice jobs.Duration `yaml:"spot_notice,omitempty"`
	// SpotAffinity and OnDemandAffinity are the node affinity a spot and
	// an on-demand pool's pods get unless the pool sets its own (default:
	// karpenter.sh/capacity-type In [spot], resp. [on-demand]). Write
	// [] for none.
	SpotAffinity     []NodeRequirement `yaml:"spot_affinity,omitempty"`
	OnDemandAffinity []NodeRequirement `yaml:"ondemand_affinity,omitempty"`
	// Pools are the per-pool pod templates, by elastic pool name. A pool
	// left out gets the defaults above.
	Pools map[string]KubePodTemplate `yaml:"pools,omitempty"`
}

// KubePodTemplate is how one elastic pool's worker pods look.
type KubePodTemplate struct {
	// Image overrides kubernetes.image.
	Image string `yaml:"image,omitempty"`
	// ServiceAccount overrides kubernetes.service_account.
	ServiceAccount string `yaml:"service_account,omitempty"`
	// Requests and Limits are the worker container's resources, as
	// Kubernetes quantities by resource name (cpu: "4", memory: 16Gi).
	Requests map[string]string `yaml:"requests,omitempty"`
	Limits   map[string]string `yaml:"limits,omitempty"`
	// GPUs asks for this many nvidia.com/gpu (request and limit) and starts
	// the worker with --gpus auto, so each GPU is a slot bound to its job.
	GPUs int `yaml:"gpus,omitempty"`
	// NodeSelector is added to the pod as it is.
	NodeSelector map[string]string `yaml:"node_selector,omitempty"`
	// NodeAffinity is the pod's required node affinity, all requirements
	// together. Left out, the pool kind's default applies (spot_affinity
	// or ondemand_affinity); [] asks for none.
	NodeAffinity []NodeRequirement `yaml:"node_affinity,omitempty"`
	// Tolerations are the pod's. Left out, a spot pool tolerates the spot
	// taints of GKE and AKS, and a pool with GPUs tolerates nvidia.com/gpu;
	// [] tolerates nothing.
	Tolerations []Toleration `yaml:"tolerations,omitempty"`
	// TerminationGrace is how long Kubernetes waits after SIGTERM before it
	// kills the worker: the worker drains in that time (worker.drain_timeout
	// for running jobs to finish, then each job's grace to checkpoint).
	// Default: drain_timeout plus the largest grace of the templates the
	// pool can run, plus 30s; it may not be less than that largest grace.
	TerminationGrace jobs.Duration `yaml:"termination_grace,omitempty"`
	// Labels and Annotations are added to each pod's metadata.
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
	// Env is added to the worker container's environment.
	Env map[string]string `yaml:"env,omitempty"`
	// PriorityClass names the pods' PriorityClass.
	PriorityClass string `yaml:"priority_class,omitempty"`
}

// NodeRequirement is one node affinity requirement: a node label key, an
// operator (In, NotIn, Exists, DoesNotExist, Gt, Lt) and its values.
type NodeRequirement struct {
	Key      string   `yaml:"key"`
	Operator string   `yaml:"operator"`
	Values   []string `yaml:"values,omitempty"`
}

// Toleration lets pods run on nodes with a matching taint.
type Toleration struct {
	Key string `yaml:"key,omitempty"`
	// Operator is Equal (default) or Exists.
	Operator string `yaml:"operator,omitempty"`
	Value    string `yaml:"value,omitempty"`
	// Effect is NoSchedule, PreferNoSchedule, NoExecute or empty (all).
	Effect string `yaml:"effect,omitempty"`
	// Seconds bounds how long a NoExecute taint is tolerated.
	Seconds *int64 `yaml:"seconds,omitempty"`
}

// The capacity types of the default node affinity.
var (
	defaultSpotAffinity     = []NodeRequirement{{Key: KubeCapacityTypeLabel, Operator: "In", Values: []string{"spot"}}}
	defaultOnDemandAffinity = []NodeRequirement{{Key: KubeCapacityTypeLabel, Operator: "In", Values: []string{"on-demand"}}}
	// defaultSpotTolerations are the taints GKE (spot node pools) and AKS
	// (spot scale sets) put on spot nodes; tolerating a taint no node has
	// is harmless.
	defaultSpotTolerations = []Toleration{
		{Key: "cloud.google.com/gke-spot", Operator: "Equal", Value: "true", Effect: "NoSchedule"},
		{Key: "kubernetes.azure.com/scalesetpriority", Operator: "Equal", Value: "spot", Effect: "NoSchedule"},
	}
	defaultGPUToleration = Toleration{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"}
)

func (k KubernetesConfig) withDefaults() KubernetesConfig {
	setDefault(&k.Namespace, DefaultKubeNamespace)
	setDefault(&k.ServiceAccount, DefaultKubeServiceAccount)
	setDefault(&k.ConfigMap, DefaultKubeConfigMap)
	setDefault(&k.UnschedulableAfter, jobs.Duration(DefaultUnschedulableAfter))
	setDefault(&k.SpotNotice, jobs.Duration(DefaultSpotNotice))
	if k.SpotAffinity == nil {
		k.SpotAffinity = defaultSpotAffinity
	}
	if k.OnDemandAffinity == nil {
		k.OnDemandAffinity = defaultOnDemandAffinity
	}
	return k
}

// KubePod is the whole pod template of an elastic pool: its own entry over
// the provider-wide settings, with every default applied. ok is false for a
// pool that is not elastic.
func (c Config) KubePod(pool string) (t KubePodTemplate, ok bool) {
	p, found := c.Pools[pool]
	if !found || !p.Kind.Elastic() {
		return KubePodTemplate{}, false
	}
	k := c.Provider.Kubernetes
	t = k.Pools[pool]
	setDefault(&t.Image, k.Image)
	setDefault(&t.ServiceAccount, k.ServiceAccount)
	if t.NodeAffinity == nil {
		t.NodeAffinity = k.OnDemandAffinity
		if p.Kind == PoolSpot {
			t.NodeAffinity = k.SpotAffinity
		}
	}
	if t.Tolerations == nil {
		t.Tolerations = []Toleration{}
		if p.Kind == PoolSpot {
			t.Tolerations = append(t.Tolerations, defaultSpotTolerations...)
		}
		if t.GPUs > 0 {
			t.Tolerations = append(t.Tolerations, defaultGPUToleration)
		}
	}
	setDefault(&t.TerminationGrace, jobs.Duration(c.Worker.DrainTimeout.Std()+c.MaxGrace(pool)+KubeGraceMargin))
	return t, true
}

// MaxGrace is the largest grace of the templates pool can run: those
// whose required labels the pool's labels include. A worker that is told
// to stop needs that long to checkpoint its jobs.
func (c Config) MaxGrace(pool string) time.Duration {
	labels := c.Pools[pool].Labels
	var most time.Duration
	for _, t := range c.Templates {
		fits := jobs.Carries(labels, t.Requires)
		g := t.Grace.Std()
		if g == 0 {
			g = jobs.DefaultGrace
		}
		if fits {
			most = max(most, g)
		}
	}
	if c.AllowRawCommands {
		// A raw command runs with the default grace.
		most = max(most, jobs.DefaultGrace)
	}
	return most
}
