package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/ballastdev/ballast/internal/config"
)

func runValidateConfig(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "validate-config", "validate-config [--strict] FILE")
	strict := fs.Bool("strict", false, "treat warnings (secrets named by environment variables unset here) as problems: exit 1")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"give the config file to check"}
	}
	path := fs.Arg(0)
	cfg, warnings, err := config.Check(path, os.Getenv)
	if err != nil {
		var ps config.Problems
		if errors.As(err, &ps) {
			for _, p := range ps {
				fmt.Fprintln(e.out, p.Error())
			}
			return fmt.Errorf("%d problem(s) in %s", len(ps), path)
		}
		return err
	}
	// An unset secret is a warning by default: a config is usually
	// checked where its secrets are not (a laptop, CI), and a service
	// that starts without one says so when it connects.
	for _, w := range warnings {
		fmt.Fprintf(e.out, "%s %s\n", e.paint(yellow, "warning:"), w.Error())
	}
	if *strict && len(warnings) > 0 {
		return fmt.Errorf("%d warning(s) in %s, refused by --strict", len(warnings), path)
	}
	note := ""
	if len(warnings) > 0 {
		note = fmt.Sprintf(", %d warning(s)", len(warnings))
	}
	fmt.Fprintf(e.out, "%s: ok (%d pools, %d templates, %d pipelines%s)\n", path, len(cfg.Pools), len(cfg.Templates), len(cfg.Pipelines), note)
	if c := cfg.Checkpoints; c.Enabled() {
		fmt.Fprintf(e.out, "checkpoints travel through %s (keep %d, chunks of %s, grace %s)\n", c.Store, c.Keep, c.ChunkSize, c.Grace)
	} else {
		fmt.Fprintf(e.out, "checkpoints stay on each worker (%s): no checkpoints.store\n", cfg.Worker.CheckpointDir)
	}
	return nil
}
