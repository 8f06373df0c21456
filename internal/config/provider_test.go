package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// kubePools are a fixed, a spot GPU and an on-demand pool, and templates
// whose graces the pod grace must cover.
const kubePools = `pools:
  fixed: {kind: fixed, slots: 2}
  spot-gpu:
    kind: spot
    max_workers: 4
    labels: {gpu_model: h100}
  od: {kind: ondemand, max_workers: 2}
templates:
  train:
    command: [train]
    grace: 4m
    requires: {gpu_model: h100}
  report:
    command: [report]
    grace: 45s
`

func TestKubernetesPodTemplatesGetDefaultsByPoolKind(t *testing.T) {
	doc := kubePools + `provider:
  kind: kubernetes
  kubernetes:
    image: ballast:1.2
    pools:
      spot-gpu:
        gpus: 1
        requests: {cpu: "8", memory: 32Gi}
      od:
        node_affinity: [{key: cloud.google.com/gke-spot, operator: DoesNotExist}]
        tolerations: []
        termination_grace: 10m
`
	cfg, err := Parse([]byte(doc), "k.yaml")
	if err != nil {
		t.Fatal(err)
	}
	k := cfg.Provider.Kubernetes
	if cfg.Provider.Kind != ProviderKubernetes || k.Namespace != "ballast" || k.ConfigMap != "ballast-config" ||
		k.ServiceAccount != "ballast-worker" || k.UnschedulableAfter.Std() != 2*time.Minute {
		t.Fatalf("defaults: %+v", k)
	}
	spot, ok := cfg.KubePod("spot-gpu")
	if !ok || spot.Image != "ballast:1.2" || spot.ServiceAccount != "ballast-worker" {
		t.Fatalf("spot template %+v", spot)
	}
	if len(spot.NodeAffinity) != 1 || spot.NodeAffinity[0].Key != KubeCapacityTypeLabel || !slices.Equal(spot.NodeAffinity[0].Values, []string{"spot"}) {
		t.Errorf("spot affinity %+v, want capacity-type In [spot]", spot.NodeAffinity)
	}
	var keys []string
	for _, tol := range spot.Tolerations {
		keys = append(keys, tol.Key)
	}
	if !slices.Equal(keys, []string{"cloud.google.com/gke-spot", "kubernetes.azure.com/scalesetpriority", "nvidia.com/gpu"}) {
		t.Errorf("spot tolerations %v, want the spot taints and nvidia.com/gpu", keys)
	}
	// Drain timeout (5m) + the largest grace the pool can run (train's
	// 4m: it requires the pool's label) + 30s.
	if got, want := spot.TerminationGrace.Std(), 5*time.Minute+4*time.Minute+30*time.Second; got != want {
		t.Errorf("spot termination grace %s, want %s", got, want)
	}
	od, _ := cfg.KubePod("od")
	if len(od.NodeAffinity) != 1 || od.NodeAffinity[0].Operator != "DoesNotExist" || len(od.Tolerations) != 0 || od.TerminationGrace.Std() != 10*time.Minute {
		t.Errorf("od template %+v: its own affinity, no tolerations, 10m grace", od)
	}
	// od cannot run train (no gpu_model label): report's 45s is its largest.
	if g := cfg.MaxGrace("od"); g != 45*time.Second {
		t.Errorf("MaxGrace(od) = %s, want 45s", g)
	}
	if _, ok := cfg.KubePod("fixed"); ok {
		t.Error("a fixed pool has no pod template")
	}
	// With no entry of its own an on-demand pool gets on-demand nodes.
	cfg.Provider.Kubernetes.Pools = nil
	od, _ = cfg.KubePod("od")
	if len(od.NodeAffinity) != 1 || od.NodeAffinity[0].Values[0] != "on-demand" {
		t.Errorf("default od affinity %+v", od.NodeAffinity)
	}
}

func TestProviderValidationNamesTheField(t *testing.T) {
	kube := func(pools string) string {
		return "provider:\n  kind: kubernetes\n  kubernetes:\n    image: ballast:1\n    pools:\n" + pools
	}
	cases := []struct {
		name, doc, field, msg string
	}{
		{"unknown kind", "provider:\n  kind: k8s # <-\n", "provider.kind", "use none, local, exec or kubernetes"},
		{"exec without scripts", "provider:\n  kind: exec\n  exec: # <-\n    launch: [/l]\n    release: [/r]\n", "provider.exec.list", "list script"},
		{"unknown key", "provider:\n  kubernetes:\n    imag: x # <-\n", "provider.kubernetes.imag", `did you mean "image"`},
		{"unknown pod key", kube("      spot-gpu:\n        node_selecter: {a: b} # <-\n"), "provider.kubernetes.pools.spot-gpu.node_selecter", `did you mean "node_selector"`},
		{"misspelt pool", kube("      spot_gpu: {} # <-\n"), "provider.kubernetes.pools.spot_gpu", `did you mean "spot-gpu"`},
		{"fixed pool", kube("      fixed: {} # <-\n"), "provider.kubernetes.pools.fixed", "only elastic"},
		{"bad quantity", kube("      od:\n        requests: {memory: 4GB} # <-\n"), "provider.kubernetes.pools.od.requests.memory", "not a quantity"},
		{"grace below a job's", kube("      spot-gpu:\n        termination_grace: 1m # <-\n"), "provider.kubernetes.pools.spot-gpu.termination_grace", "shorter than the 4m0s grace"},
		{"bad toleration", kube("      od:\n        tolerations: [{key: a, operator: Is}] # <-\n"), "provider.kubernetes.pools.od.tolerations[0].operator", "Equal or Exists"},
		{"affinity without values", kube("      od:\n        node_affinity: [{key: zone, operator: In}] # <-\n"), "provider.kubernetes.pools.od.node_affinity[0].values", "at least one value"},
		{"reserved label", kube("      od:\n        labels: {ballast/pool: x} # <-\n"), "provider.kubernetes.pools.od.labels.ballast/pool", "provider's own"},
		{"gpus twice", kube("      spot-gpu:\n        gpus: 1\n        limits: {nvidia.com/gpu: \"1\"} # <-\n"), "provider.kubernetes.pools.spot-gpu.limits.nvidia.com/gpu", "keep one"},
		{"bad namespace", "provider:\n  kubernetes:\n    image: x\n    namespace: Ballast_NS # <-\n", "provider.kubernetes.namespace", "not a namespace name"},
		{"no image", "provider:\n  kind: kubernetes # <-\n", "provider.kubernetes.image", "missing"},
		{"zero wait", "provider:\n  kubernetes:\n    image: x\n    unschedulable_after: -1s # <-\n", "provider.kubernetes.unschedulable_after", "must be positive"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := kubePools + c.doc
			_, err := Parse([]byte(doc), "p.yaml")
			var ps Problems
			if !errors.As(err, &ps) || len(ps) != 1 {
				t.Fatalf("Parse = %v, want one problem", err)
			}
			p := ps[0]
			if p.Field != c.field || !strings.Contains(p.Message, c.msg) {
				t.Errorf("problem %v, want field %s with %q", p, c.field, c.msg)
			}
			if c.field != "provider.kubernetes.image" {
				if line := wantLine(t, doc); p.Line != line {
					t.Errorf("line %d, want %d (%v)", p.Line, line, p)
				}
			}
		})
	}
}

// Pool names label the worker pods, so under the kubernetes provider they
// must be label values too.
func TestKubernetesPoolNamesAreLabelValues(t *testing.T) {
	doc := "pools:\n  od_: {kind: ondemand}\nprovider:\n  kind: kubernetes\n  kubernetes: {image: x}\n"
	_, err := Parse([]byte(doc), "p.yaml")
	var ps Problems
	if !errors.As(err, &ps) || len(ps) != 1 || ps[0].Field != "pools.od_" || ps[0].Line != 2 ||
		!strings.Contains(ps[0].Message, "start and end with a letter or digit") {
		t.Fatalf("Parse = %v, want one problem at pools.od_ (line 2)", err)
	}
	if _, err := Parse([]byte("pools:\n  od_: {kind: ondemand}\n"), "p.yaml"); err != nil {
		t.Fatalf("without the kubernetes provider the name is fine: %v", err)
	}
}
