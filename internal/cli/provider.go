package cli

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"path"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/control/provider"
	"github.com/ballastdev/ballast/orchestrator/control/provider/kube"
)

// execScripts are the operator scripts of the exec provider, as given on
// the command line; each one set replaces the config's.
type execScripts struct{ launch, release, list string }

// providerKind is the provider to run: the --provider flag when given,
// else the config's provider.kind. The flag wins so that one config file
// can serve a cluster and a developer's machine.
func providerKind(flag string, cfg config.Config) string {
	if flag != "" {
		return flag
	}
	return cfg.Provider.Kind
}

// newProvider builds the named elastic capacity provider and registers its
// Close on st, which drains the workers it started.
func newProvider(ctx context.Context, name string, cfg config.Config, cfgPath string, scripts execScripts, log *slog.Logger, st *stack) (provider.Provider, error) {
	var p provider.Provider
	switch name {
	case config.ProviderNone, "":
		return nil, nil
	case config.ProviderLocal:
		if cfgPath == "" {
			return nil, usageError{"--provider local needs --config: the workers it starts read the same file"}
		}
		delays := map[string]time.Duration{}
		for n, pool := range cfg.Pools {
			delays[n] = pool.StartupDelay.Std()
		}
		l, err := provider.NewLocal(provider.LocalOptions{ConfigPath: cfgPath, StartupDelay: delays,
			ReleaseTimeout: cfg.Worker.DrainTimeout.Std() + time.Minute, Logger: log})
		if err != nil {
			return nil, err
		}
		p = l
	case config.ProviderExec:
		launch, release, list := cfg.Provider.Exec.Launch, cfg.Provider.Exec.Release, cfg.Provider.Exec.List
		for _, s := range []struct {
			flag string
			argv *[]string
		}{{scripts.launch, &launch}, {scripts.release, &release}, {scripts.list, &list}} {
			if s.flag != "" {
				*s.argv = strings.Fields(s.flag)
			}
		}
		if len(launch) == 0 || len(release) == 0 || len(list) == 0 {
			return nil, usageError{"the exec provider needs its three scripts: --exec-launch, --exec-release and --exec-list, or provider.exec in the config"}
		}
		e, err := provider.NewExec(provider.ExecOptions{Launch: launch, Release: release, List: list, Logger: log})
		if err != nil {
			return nil, err
		}
		p = e
	case config.ProviderKubernetes:
		k, err := newKubeProvider(ctx, cfg, log)
		if err != nil {
			return nil, err
		}
		p = k
	default:
		return nil, usageError{fmt.Sprintf("--provider %q: use none, local, exec or kubernetes", name)}
	}
	p = provider.WithRetry(p, provider.RetryOptions{Logger: log})
	st.push(func() { _ = p.Close() })
	return p, nil
}

// newKubeProvider starts the Kubernetes provider the config describes.
// The config was validated, so its quantities parse.
func newKubeProvider(ctx context.Context, cfg config.Config, log *slog.Logger) (*kube.Provider, error) {
	k := cfg.Provider.Kubernetes
	if k.Image == "" && len(k.Pools) == 0 {
		return nil, usageError{"the kubernetes provider needs provider.kubernetes.image (and a config map holding this config): see deploy/kubernetes"}
	}
	client, err := kube.NewClient(k.Kubeconfig, k.Context)
	if err != nil {
		return nil, err
	}
	pools := map[string]kube.PodTemplate{}
	for name := range cfg.Pools {
		if t, ok := cfg.KubePod(name); ok {
			pools[name] = kubeTemplate(t, k.ImagePullPolicy)
		}
	}
	return kube.New(ctx, kube.Options{
		Client: client, Namespace: k.Namespace, Installation: cfg.Namespace,
		ConfigMap: k.ConfigMap, ConfigDir: config.KubeConfigMountDir, EnvFromSecret: k.EnvFromSecret,
		CheckpointClaim: k.CheckpointClaim, CheckpointDir: path.Clean(cfg.Worker.CheckpointDir), LogDir: path.Clean(cfg.Worker.LogDir),
		Pools: pools, UnschedulableAfter: k.UnschedulableAfter.Std(), SpotNotice: k.SpotNotice.Std(), Logger: log,
	})
}

// kubeTemplate turns a pool's pod template from the config into the
// provider's.
func kubeTemplate(t config.KubePodTemplate, pull string) kube.PodTemplate {
	out := kube.PodTemplate{Image: t.Image, ImagePullPolicy: corev1.PullPolicy(pull), ServiceAccount: t.ServiceAccount,
		Requests: quantities(t.Requests), Limits: quantities(t.Limits), GPUs: t.GPUs,
		NodeSelector: maps.Clone(t.NodeSelector), PriorityClass: t.PriorityClass, TerminationGrace: t.TerminationGrace.Std(),
		Labels: maps.Clone(t.Labels), Annotations: maps.Clone(t.Annotations), Env: maps.Clone(t.Env)}
	for _, r := range t.NodeAffinity {
		out.NodeAffinity = append(out.NodeAffinity, corev1.NodeSelectorRequirement{Key: r.Key,
			Operator: corev1.NodeSelectorOperator(r.Operator), Values: r.Values})
	}
	for _, tol := range t.Tolerations {
		op := corev1.TolerationOperator(tol.Operator)
		if op == "" {
			op = corev1.TolerationOpEqual
		}
		out.Tolerations = append(out.Tolerations, corev1.Toleration{Key: tol.Key, Operator: op, Value: tol.Value,
			Effect: corev1.TaintEffect(tol.Effect), TolerationSeconds: tol.Seconds})
	}
	return out
}

func quantities(m map[string]string) corev1.ResourceList {
	if len(m) == 0 {
		return nil
	}
	out := corev1.ResourceList{}
	for k, v := range m {
		out[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	return out
}
