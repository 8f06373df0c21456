package kube

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The worker container's name and its volumes.
const (
	containerName   = "worker"
	volumeConfig    = "config"
	volumeCheckpt   = "checkpoints"
	volumeLogs      = "logs"
	componentWorker = "worker"
)

// selector selects this installation's worker pods.
func (p *Provider) selector() string {
	return LabelInstallation + "=" + p.opts.Installation + "," + LabelInstance
}

// podFor is the pod of instance id in pool, from the pool's template.
func (p *Provider) podFor(pool, id string, t PodTemplate) *corev1.Pod {
	o := p.opts
	labels := maps.Clone(t.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	// Set after the template's, so they cannot be overridden.
	maps.Copy(labels, map[string]string{
		"app.kubernetes.io/name":      "ballast",
		"app.kubernetes.io/component": componentWorker,
		LabelInstallation:             o.Installation,
		LabelPool:                     pool,
		LabelInstance:                 id,
	})
	args := []string{"worker", "--config", strings.TrimSuffix(o.ConfigDir, "/") + "/" + o.ConfigKey, "--pool", pool, "--id", id}
	res := corev1.ResourceRequirements{Requests: t.Requests.DeepCopy(), Limits: t.Limits.DeepCopy()}
	if t.GPUs > 0 {
		// A GPU is a slot bound to its job: the worker finds them itself.
		args = append(args, "--gpus", "auto")
		gpus := *resource.NewQuantity(int64(t.GPUs), resource.DecimalSI)
		if res.Requests == nil {
			res.Requests = corev1.ResourceList{}
		}
		if res.Limits == nil {
			res.Limits = corev1.ResourceList{}
		}
		res.Requests[GPUResource], res.Limits[GPUResource] = gpus, gpus
	}
	var env []corev1.EnvVar
	for _, k := range slices.Sorted(maps.Keys(t.Env)) {
		env = append(env, corev1.EnvVar{Name: k, Value: t.Env[k]})
	}
	c := corev1.Container{
		Name: containerName, Image: t.Image, ImagePullPolicy: t.ImagePullPolicy, Args: args, Env: env,
		Resources: res,
		VolumeMounts: []corev1.VolumeMount{
			{Name: volumeConfig, MountPath: o.ConfigDir, ReadOnly: true},
		},
		SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: new(false)},
	}
	if o.EnvFromSecret != "" {
		c.EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: o.EnvFromSecret}}}}
	}
	vols := []corev1.Volume{{Name: volumeConfig, VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: o.ConfigMap}}}}}
	if o.CheckpointClaim != "" && o.CheckpointDir != "" {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: volumeCheckpt, MountPath: o.CheckpointDir})
		vols = append(vols, corev1.Volume{Name: volumeCheckpt, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: o.CheckpointClaim}}})
	}
	if o.LogDir != "" {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: volumeLogs, MountPath: o.LogDir})
		vols = append(vols, corev1.Volume{Name: volumeLogs, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	}
	grace := int64(t.TerminationGrace.Seconds())
	spec := corev1.PodSpec{
		// A worker that exits is gone: the controller launches another if
		// the work still needs one, under a new ID.
		RestartPolicy:                 corev1.RestartPolicyNever,
		ServiceAccountName:            t.ServiceAccount,
		AutomountServiceAccountToken:  new(false),
		TerminationGracePeriodSeconds: &grace,
		NodeSelector:                  maps.Clone(t.NodeSelector),
		Tolerations:                   slices.Clone(t.Tolerations),
		PriorityClassName:             t.PriorityClass,
		Containers:                    []corev1.Container{c},
		Volumes:                       vols,
	}
	if len(t.NodeAffinity) > 0 {
		spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: slices.Clone(t.NodeAffinity)}},
			}}}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: o.Namespace, Labels: labels, Annotations: maps.Clone(t.Annotations)},
		Spec:       spec,
	}
}
