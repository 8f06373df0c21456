package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ballastdev/ballast/queues"
)

// runMigrateKeys renames an installation's Redis keys from the layout
// before hash tags to the tagged one (see queues.MigrateKeys). Run it with
// every controller and worker of the namespace stopped, after upgrading the
// binary and before starting the new version.
func runMigrateKeys(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "migrate-keys", "migrate-keys [--config FILE] [--dry-run]")
	cfgPath := configFlag(fs)
	dry := fs.Bool("dry-run", false, "count what would move and change nothing")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageError{"migrate-keys takes no arguments"}
	}
	store, closeStore, err := openStore(ctx, *cfgPath)
	if err != nil {
		return err
	}
	defer closeStore()
	ns := store.Namespace()
	res, err := queues.MigrateKeys(ctx, store.Redis(), ns.Name(), queues.MigrateKeysOptions{DryRun: *dry})
	if err != nil {
		return err
	}
	verb := "moved"
	if *dry {
		verb = "would move"
	}
	fmt.Fprintf(e.out, "namespace %s: %s %d keys from %s* to %s*\n", ns.Name(), verb, res.Total(), ns.LegacyPrefix(), ns.Prefix())
	for _, f := range slices.Sorted(maps.Keys(res.Moved)) {
		fmt.Fprintf(e.out, "  %-12s %d\n", f, res.Moved[f])
	}
	if len(res.Conflicts) > 0 {
		shown := res.Conflicts[:min(len(res.Conflicts), 10)]
		return fmt.Errorf("%d old keys were left in place because their new name already holds something else (%s): "+
			"a process of the new version ran before the migration finished; stop it, compare the two keys, delete the one to drop, and run migrate-keys again",
			len(res.Conflicts), strings.Join(shown, ", "))
	}
	if !*dry && res.Total() == 0 {
		fmt.Fprintln(e.out, "nothing to move: the namespace already uses the tagged layout")
	}
	return nil
}
