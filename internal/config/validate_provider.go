package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ballastdev/ballast/internal/textdist"
)

// KubeReservedLabelPrefix is the label prefix the provider owns on worker
// pods (pool, instance, installation): a pool's own labels may not use it,
// or a pod could be taken for another pool's or another installation's.
const KubeReservedLabelPrefix = "ballast/"

func (c Config) validateProvider(ps *problems) {
	p := c.Provider
	switch p.Kind {
	case ProviderNone, ProviderLocal, ProviderKubernetes:
	case ProviderExec:
		for _, s := range []struct {
			name string
			argv []string
		}{{"launch", p.Exec.Launch}, {"release", p.Exec.Release}, {"list", p.Exec.List}} {
			if len(s.argv) == 0 || strings.TrimSpace(s.argv[0]) == "" {
				ps.add("provider.exec."+s.name, "missing: the exec provider needs its %s script, as an argv such as [/opt/ballast/%s.sh]", s.name, s.name)
			}
		}
	default:
		ps.add("provider.kind", "unknown provider %q (use none, local, exec or kubernetes)", p.Kind)
	}
	k := p.Kubernetes
	// The section is checked whenever it is written, not only when chosen
	// here: --provider kubernetes may choose it at start.
	if p.Kind == ProviderKubernetes || k.Image != "" || len(k.Pools) > 0 || k.Kubeconfig != "" {
		c.validateKube(ps)
	}
}

func (c Config) validateKube(ps *problems) {
	k := c.Provider.Kubernetes
	const at = "provider.kubernetes"
	if errs := validation.IsDNS1123Label(k.Namespace); len(errs) > 0 {
		ps.add(at+".namespace", "%q is not a namespace name: %s", k.Namespace, strings.Join(errs, "; "))
	}
	switch k.ImagePullPolicy {
	case "", "Always", "IfNotPresent", "Never":
	default:
		ps.add(at+".image_pull_policy", "%q: use Always, IfNotPresent or Never (or leave it out)", k.ImagePullPolicy)
	}
	for _, f := range []struct{ field, v string }{
		{"service_account", k.ServiceAccount}, {"config_map", k.ConfigMap},
		{"env_from_secret", k.EnvFromSecret}, {"checkpoint_claim", k.CheckpointClaim},
	} {
		checkObjectName(ps, at+"."+f.field, f.v)
	}
	if k.UnschedulableAfter <= 0 {
		ps.add(at+".unschedulable_after", "must be positive, such as 2m: how long a worker pod may wait for a node before it counts as a stock-out")
	}
	if k.SpotNotice <= 0 {
		ps.add(at+".spot_notice", "must be positive, such as 2m: how long a spot interruption leaves before the node goes")
	}
	checkAffinity(ps, at+".spot_affinity", k.SpotAffinity)
	checkAffinity(ps, at+".ondemand_affinity", k.OnDemandAffinity)

	// The namespace and the pool names become label values on the pods.
	if errs := validation.IsValidLabelValue(c.Namespace); len(errs) > 0 && namespaceRE.MatchString(c.Namespace) {
		ps.add("namespace", "%q labels the worker pods (ballast/installation), so it must start and end with a letter or digit", c.Namespace)
	}
	var elastic []string
	for _, name := range sortedNames(c.Pools) {
		if !c.Pools[name].Kind.Elastic() {
			continue
		}
		elastic = append(elastic, name)
		if errs := validation.IsValidLabelValue(name); len(errs) > 0 {
			ps.add("pools."+name, "%q labels its worker pods (ballast/pool), so with the kubernetes provider it must start and end with a letter or digit", name)
		}
	}
	for _, name := range sortedNames(k.Pools) {
		field := at + ".pools." + name
		if !slices.Contains(elastic, name) {
			ps.add(field, "%s", notAnElasticPool(name, elastic, c.Pools))
			continue
		}
		t, _ := c.KubePod(name)
		c.validateKubePod(ps, field, name, t)
	}
	for _, name := range elastic {
		if _, own := k.Pools[name]; own || c.Pools[name].MaxWorkers == 0 {
			continue
		}
		if k.Image == "" {
			ps.add(at+".image", "missing: pool %s's worker pods need an image holding the ballast binary (set it here, or pools.%s.image)", name, name)
			break
		}
	}
}

// notAnElasticPool explains a pod template for a pool that is not there or
// not elastic, suggesting the elastic pool it was likely meant for.
func notAnElasticPool(name string, elastic []string, pools map[string]PoolConfig) string {
	if p, ok := pools[name]; ok {
		return fmt.Sprintf("pool %q is a %s pool; only elastic (ondemand, spot) pools are started as pods: drop this entry", name, p.Kind)
	}
	if best := textdist.Nearest(name, elastic, 2+len(name)/4); best != "" {
		return fmt.Sprintf("no elastic pool %q in pools; did you mean %q?", name, best)
	}
	return fmt.Sprintf("no elastic pool %q in pools (elastic pools: %s)", name, strings.Join(elastic, ", "))
}

func (c Config) validateKubePod(ps *problems, field, pool string, t KubePodTemplate) {
	if t.Image == "" {
		ps.add(field+".image", "missing: set provider.kubernetes.image, or an image for this pool")
	}
	checkObjectName(ps, field+".service_account", t.ServiceAccount)
	checkObjectName(ps, field+".priority_class", t.PriorityClass)
	checkQuantities(ps, field+".requests", t.Requests)
	checkQuantities(ps, field+".limits", t.Limits)
	if t.GPUs < 0 {
		ps.add(field+".gpus", "must be 0 or more")
	}
	if _, set := t.Limits["nvidia.com/gpu"]; set && t.GPUs > 0 {
		ps.add(field+".limits.nvidia.com/gpu", "gpus already sets nvidia.com/gpu: keep one of the two")
	}
	checkLabels(ps, field+".node_selector", t.NodeSelector, false)
	checkLabels(ps, field+".labels", t.Labels, true)
	for _, key := range slices.Sorted(maps.Keys(t.Annotations)) {
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			ps.add(field+".annotations."+key, "not an annotation key: %s", strings.Join(errs, "; "))
		}
	}
	for _, key := range slices.Sorted(maps.Keys(t.Env)) {
		if !envNameRE.MatchString(key) {
			ps.add(field+".env."+key, "not an environment variable name: use letters, digits and '_', not starting with a digit")
		}
	}
	checkAffinity(ps, field+".node_affinity", t.NodeAffinity)
	for i, tol := range t.Tolerations {
		checkToleration(ps, fmt.Sprintf("%s.tolerations[%d]", field, i), tol)
	}
	if most := c.MaxGrace(pool); t.TerminationGrace.Std() < most {
		ps.add(field+".termination_grace", "%s is shorter than the %s grace of a template this pool runs: Kubernetes would kill its jobs before they checkpoint; use at least %s (worker.drain_timeout plus that grace, to let running jobs finish first)",
			t.TerminationGrace, most, c.Worker.DrainTimeout.Std()+most)
	}
}

func checkObjectName(ps *problems, field, v string) {
	if v == "" {
		return
	}
	if errs := validation.IsDNS1123Subdomain(v); len(errs) > 0 {
		ps.add(field, "%q is not a Kubernetes object name: %s", v, strings.Join(errs, "; "))
	}
}

func checkQuantities(ps *problems, field string, qs map[string]string) {
	for _, name := range slices.Sorted(maps.Keys(qs)) {
		if errs := validation.IsQualifiedName(name); len(errs) > 0 {
			ps.add(field+"."+name, "not a resource name: %s", strings.Join(errs, "; "))
			continue
		}
		q, err := resource.ParseQuantity(qs[name])
		switch {
		case err != nil:
			ps.add(field+"."+name, "%q is not a quantity: write it like 500m, 4 or 16Gi", qs[name])
		case q.Sign() < 0:
			ps.add(field+"."+name, "%q: must not be negative", qs[name])
		}
	}
}

func checkLabels(ps *problems, field string, labels map[string]string, own bool) {
	for _, key := range slices.Sorted(maps.Keys(labels)) {
		f := field + "." + key
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			ps.add(f, "not a label key: %s", strings.Join(errs, "; "))
			continue
		}
		if own && strings.HasPrefix(key, KubeReservedLabelPrefix) {
			ps.add(f, "the %s prefix is the provider's own (pool, instance, installation): use another prefix", KubeReservedLabelPrefix)
		}
		if errs := validation.IsValidLabelValue(labels[key]); len(errs) > 0 {
			ps.add(f, "%q is not a label value: %s", labels[key], strings.Join(errs, "; "))
		}
	}
}

func checkAffinity(ps *problems, field string, reqs []NodeRequirement) {
	for i, r := range reqs {
		f := fmt.Sprintf("%s[%d]", field, i)
		if errs := validation.IsQualifiedName(r.Key); len(errs) > 0 {
			ps.add(f+".key", "%q is not a node label key: %s", r.Key, strings.Join(errs, "; "))
		}
		switch r.Operator {
		case "In", "NotIn":
			if len(r.Values) == 0 {
				ps.add(f+".values", "%s needs at least one value", r.Operator)
			}
		case "Exists", "DoesNotExist":
			if len(r.Values) > 0 {
				ps.add(f+".values", "%s takes no values: drop them", r.Operator)
			}
		case "Gt", "Lt":
			if len(r.Values) != 1 {
				ps.add(f+".values", "%s takes one integer value", r.Operator)
			}
		default:
			ps.add(f+".operator", "%q: use In, NotIn, Exists, DoesNotExist, Gt or Lt", r.Operator)
		}
	}
}

func checkToleration(ps *problems, field string, t Toleration) {
	switch t.Operator {
	case "", "Equal":
		if t.Key == "" {
			ps.add(field+".key", "missing: an Equal toleration names the taint's key (operator Exists with no key tolerates every taint)")
		}
	case "Exists":
		if t.Value != "" {
			ps.add(field+".value", "operator Exists matches any value: drop value")
		}
	default:
		ps.add(field+".operator", "%q: use Equal or Exists", t.Operator)
	}
	switch t.Effect {
	case "", "NoSchedule", "PreferNoSchedule", "NoExecute":
	default:
		ps.add(field+".effect", "%q: use NoSchedule, PreferNoSchedule, NoExecute or leave it out for all", t.Effect)
	}
	if t.Seconds != nil && t.Effect != "NoExecute" {
		ps.add(field+".seconds", "only a NoExecute toleration can be time-bound")
	}
	if t.Key != "" {
		if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
			ps.add(field+".key", "%q is not a taint key: %s", t.Key, strings.Join(errs, "; "))
		}
	}
}
