package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/ballastdev/ballast/internal/config"
)

func runValidateConfig(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "validate-config", "validate-config FILE")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"give the config file to check"}
	}
	cfg, err := config.Load(fs.Arg(0))
	if err != nil {
		var ps config.Problems
		if errors.As(err, &ps) {
			for _, p := range ps {
				fmt.Fprintln(e.out, p.Error())
			}
			return fmt.Errorf("%d problem(s) in %s", len(ps), fs.Arg(0))
		}
		return err
	}
	fmt.Fprintf(e.out, "%s: ok (%d pools, %d templates, %d pipelines)\n", fs.Arg(0), len(cfg.Pools), len(cfg.Templates), len(cfg.Pipelines))
	return nil
}
