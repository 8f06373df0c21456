package cli

import (
	"context"
	"fmt"
	"log/slog"
)

func runController(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "controller", "controller [--config FILE]")
	cfgPath := configFlag(fs)
	if err := parse(fs, args); err != nil {
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
	nc, err := connectNATS(cfg, "ballast-controller")
	if err != nil {
		return err
	}
	defer nc.Close()
	var st stack
	defer func() { st.stop() }() // a closure: st grows after this line
	cp, err := startControlPlane(ctx, cfg, rdb, nc, log, &st)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.out, "controller running: NATS intake on %s, HTTP API on http://%s\n", subjects(cfg).Submit(), cp.addr)
	<-ctx.Done()
	return nil
}
