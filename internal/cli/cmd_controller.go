package cli

import (
	"context"
	"fmt"
	"log/slog"
)

func runController(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "controller", "controller [--config FILE]")
	cfgPath := configFlag(fs)
	capacity := fs.Bool("capacity", true, "run the hybrid capacity policy (lend, reclaim, migrate, scale elastic pools)")
	provName := fs.String("provider", "", "elastic capacity provider: none, local (child worker processes), exec (operator scripts) or kubernetes (a pod per worker); overrides provider.kind of the config (default: it, else none)")
	launch := fs.String("exec-launch", "", "exec provider: launch script (overrides provider.exec.launch)")
	release := fs.String("exec-release", "", "exec provider: release script (overrides provider.exec.release)")
	list := fs.String("exec-list", "", "exec provider: list script (overrides provider.exec.list)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := guardProcess(); err != nil {
		return err
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(e.errOut, nil))
	rdb, err := connectRedis(ctx, cfg)
	if err != nil {
		return err
	}
	defer rdb.Close()
	nc, err := connectNATSLogged(cfg, "ballast-controller", log)
	if err != nil {
		return err
	}
	defer nc.Close()
	var st stack
	defer func() { st.stop() }() // a closure: st grows after this line
	// The kind in force, for status and the dashboard too.
	cfg.Provider.Kind = providerKind(*provName, cfg)
	prov, err := newProvider(ctx, cfg.Provider.Kind, cfg, *cfgPath, execScripts{*launch, *release, *list}, log, &st)
	if err != nil {
		return err
	}
	cp, err := startControlPlane(ctx, cfg, rdb, nc, *capacity, prov, log, &st)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.out, "controller running: NATS intake on %s, HTTP API on http://%s\n", subjects(cfg).Submit(), cp.addr)
	<-ctx.Done()
	return nil
}
