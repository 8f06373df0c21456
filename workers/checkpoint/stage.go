package checkpoint

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A restore builds in a staging directory beside its target, named
//
//	.<target>.restore-<pid>-<random>
//
// and swapIn moves the target's old content to that name plus ".old" for
// a moment. A process that dies mid-restore leaves them behind; the pid
// in the name tells a later process whether their owner still runs, since
// several workers may share a checkpoint root.
const (
	stageMark = ".restore-"
	oldSuffix = ".old"
)

// LegacyStageAge is how old a staging directory named without a pid (by
// an earlier version) must be before CleanStaging removes it: its owner
// cannot be told, and no restore takes that long.
const LegacyStageAge = 24 * time.Hour

// stagePrefix is the os.MkdirTemp pattern of a restore into target by pid.
func stagePrefix(target string, pid int) string {
	return "." + target + stageMark + strconv.Itoa(pid) + "-"
}

// stageOwner parses a staging directory's name: ok says it is one, pid is
// its owner's (0: named without one).
func stageOwner(name string) (pid int, ok bool) {
	i := strings.LastIndex(name, stageMark)
	if !strings.HasPrefix(name, ".") || i <= 1 {
		return 0, false
	}
	rest := strings.TrimSuffix(name[i+len(stageMark):], oldSuffix)
	owner, random, two := strings.Cut(rest, "-")
	if !two {
		owner, random = "", rest
	}
	if !digits(random) || (two && !digits(owner)) {
		return 0, false
	}
	if !two {
		return 0, true
	}
	pid, err := strconv.Atoi(owner)
	return pid, err == nil && pid > 0
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// CleanStaging removes the staging directories that restores into root's
// directories left behind: those of a process that no longer runs (alive
// says, nil: ProcessAlive), and those named without a pid once older than
// LegacyStageAge. The calling process's own are kept: a restore of it may
// be in flight. It returns the paths removed; a root that does not exist
// has none.
func CleanStaging(root string, alive func(pid int) bool, now time.Time) ([]string, error) {
	if alive == nil {
		alive = ProcessAlive
	}
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	var removed []string
	var errs []error
	for _, e := range entries {
		pid, ok := stageOwner(e.Name())
		if !ok || !e.IsDir() || pid == self {
			continue
		}
		if pid == 0 {
			info, err := e.Info()
			if err != nil || now.Sub(info.ModTime()) < LegacyStageAge {
				continue
			}
		} else if alive(pid) {
			continue
		}
		p := filepath.Join(root, e.Name())
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	return removed, errors.Join(errs...)
}
