package cli

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/provider"
)

// execScripts are the operator scripts of the exec provider.
type execScripts struct{ launch, release, list string }

// newProvider builds the named elastic capacity provider and registers its
// Close on st, which drains the workers it started.
func newProvider(name string, cfg config.Config, cfgPath string, scripts execScripts, log *slog.Logger, st *stack) (provider.Provider, error) {
	var p provider.Provider
	switch name {
	case "none", "":
		return nil, nil
	case "local":
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
	case "exec":
		if scripts.launch == "" || scripts.release == "" || scripts.list == "" {
			return nil, usageError{"--provider exec needs --exec-launch, --exec-release and --exec-list"}
		}
		e, err := provider.NewExec(provider.ExecOptions{Launch: strings.Fields(scripts.launch),
			Release: strings.Fields(scripts.release), List: strings.Fields(scripts.list), Logger: log})
		if err != nil {
			return nil, err
		}
		p = e
	default:
		return nil, usageError{fmt.Sprintf("--provider %q: use none, local or exec", name)}
	}
	p = provider.WithRetry(p, provider.RetryOptions{Logger: log})
	st.push(func() { _ = p.Close() })
	return p, nil
}
