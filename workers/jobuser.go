package workers

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/workers/runas"
)

// jobUsers are the users jobs run as (Options.RunAs, TemplateRunAs),
// resolved once when the worker is made so a missing account stops the
// worker at start, not each job.
type jobUsers struct {
	def        *runas.User
	byTemplate map[string]runas.User
}

// resolveJobUsers looks up every run_as user. Dropping to another user
// takes root: a worker that is not root would fail every job at its
// start, so it is refused here, naming the fix.
func resolveJobUsers(o Options, euid int) (jobUsers, error) {
	var u jobUsers
	if o.RunAs == "" && len(o.TemplateRunAs) == 0 {
		return u, nil
	}
	if runtime.GOOS != "linux" {
		return u, errors.New("run_as: jobs run as another user on Linux only; remove run_as")
	}
	if euid != 0 {
		return u, fmt.Errorf("run_as: the worker runs as UID %d, and only root can start jobs as another user: start the worker as root, or remove run_as", euid)
	}
	var errs []error
	if o.RunAs != "" {
		d, err := runas.Lookup(o.RunAs)
		if err != nil {
			errs = append(errs, fmt.Errorf("run_as: %w", err))
		}
		u.def = &d
	}
	u.byTemplate = make(map[string]runas.User, len(o.TemplateRunAs))
	for _, name := range slices.Sorted(maps.Keys(o.TemplateRunAs)) {
		t, err := runas.Lookup(o.TemplateRunAs[name])
		if err != nil {
			errs = append(errs, fmt.Errorf("templates.%s.run_as: %w", name, err))
		}
		u.byTemplate[name] = t
	}
	return u, errors.Join(errs...)
}

// of is the user attempt j runs as; nil is the worker's own.
func (u jobUsers) of(j jobs.Job) *runas.User {
	if t, ok := u.byTemplate[j.Spec.Template]; ok && j.Spec.Template != "" {
		return &t
	}
	return u.def
}

// all lists every distinct user jobs may run as.
func (u jobUsers) all() []runas.User {
	var out []runas.User
	if u.def != nil {
		out = append(out, *u.def)
	}
	for _, name := range slices.Sorted(maps.Keys(u.byTemplate)) {
		out = append(out, u.byTemplate[name])
	}
	return out
}

// prepareCheckpointRoot makes the checkpoint root passable, not readable,
// for the run_as users (mode 0711): a job must reach its own directory
// inside, but not list the others' job IDs. Every directory above it must
// let each of them through, or no job could reach its checkpoints; that
// is the operator's to fix, so it is named rather than changed.
func (u jobUsers) prepareCheckpointRoot(root string) error {
	users := u.all()
	if len(users) == 0 {
		return nil
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("checkpoint_dir: %w", err)
	}
	if err := os.MkdirAll(abs, 0o711); err != nil {
		return fmt.Errorf("checkpoint_dir: %w", err)
	}
	if err := os.Chmod(abs, 0o711); err != nil {
		return fmt.Errorf("checkpoint_dir: %w", err)
	}
	for _, ru := range users {
		if err := searchable(abs, ru); err != nil {
			return fmt.Errorf("checkpoint_dir: jobs run as %s cannot reach %s: %w", ru, abs, err)
		}
	}
	return nil
}

// searchable checks that ru may search dir and every directory above it, by
// their permission bits.
func searchable(dir string, ru runas.User) error {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil // no owner to compare on this system
		}
		mode := fi.Mode().Perm()
		var allowed bool
		switch {
		case st.Uid == ru.UID:
			allowed = mode&0o100 != 0
		case slices.Contains(ru.Groups, st.Gid):
			allowed = mode&0o010 != 0
		default:
			allowed = mode&0o001 != 0
		}
		if !allowed {
			return fmt.Errorf("%s (mode %04o, owner %d:%d) does not let it through; chmod o+x %s, or move checkpoint_dir", d, mode, st.Uid, st.Gid, d)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// ownCheckpointDir gives a job's checkpoint directory to the user its
// attempt runs as, mode 0700: no other user's job can read it. Only the
// directory itself changes owner. Files an attempt of another user left
// keep theirs: a recursive chown by root inside a directory a job can
// write would follow whatever links the job planted there.
func ownCheckpointDir(dir string, ru *runas.User) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if ru != nil {
		// Lchown: should dir be a link (it cannot be made one by a job,
		// whose parent directory is root's), change the link, not its
		// target.
		if err := os.Lchown(dir, int(ru.UID), int(ru.GID)); err != nil {
			return err
		}
	}
	// Chmod too, for a directory an earlier attempt or release left open.
	return os.Chmod(dir, 0o700)
}

// withHome gives a job run as another user that user's HOME (or none):
// the worker's own is a directory the job may not enter.
func withHome(env []string, ru *runas.User) []string {
	if ru == nil {
		return env
	}
	out := env[:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "HOME=") {
			out = append(out, kv)
		}
	}
	if ru.Home != "" {
		out = append(out, "HOME="+ru.Home)
		slices.Sort(out)
	}
	return out
}
