//go:build linux

package workers

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// formatCredential writes a run_as user for the supervisor's --user
// argument: UID:GID:GROUP,GROUP... The worker resolved the name; the
// supervisor takes numbers only, so it needs no account database.
func formatCredential(uid, gid uint32, groups []uint32) string {
	gs := make([]string, len(groups))
	for i, g := range groups {
		gs[i] = strconv.FormatUint(uint64(g), 10)
	}
	return fmt.Sprintf("%d:%d:%s", uid, gid, strings.Join(gs, ","))
}

// parseCredential reads --user. Root's IDs are refused here as well: the
// flag exists to take root away.
func parseCredential(s string) (*syscall.Credential, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return nil, fmt.Errorf("--user %q is not UID:GID:GROUPS", s)
	}
	ids := make([]uint32, 0, 2)
	for _, p := range parts[:2] {
		n, err := strconv.ParseUint(p, 10, 32)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("--user %q: %q is not a non-root ID", s, p)
		}
		ids = append(ids, uint32(n))
	}
	c := &syscall.Credential{Uid: ids[0], Gid: ids[1], Groups: []uint32{}}
	if parts[2] != "" {
		for _, p := range strings.Split(parts[2], ",") {
			n, err := strconv.ParseUint(p, 10, 32)
			if err != nil || n == 0 {
				return nil, fmt.Errorf("--user %q: group %q is not a non-root ID", s, p)
			}
			c.Groups = append(c.Groups, uint32(n))
		}
	}
	return c, nil
}

// forbidNewPrivileges sets no_new_privs on the supervisor's thread, so the
// job forked from it inherits it: no exec of a set-user-ID program or one
// with file capabilities gives the job more than its user has (sudo, su,
// a set-user-ID root helper). The supervisor itself execs nothing after
// this and is not hindered: it drops the job's IDs with setuid, which
// no_new_privs allows. The flag belongs to a thread, so the caller keeps
// the goroutine on this thread until it has started the job.
func forbidNewPrivileges() error {
	runtime.LockOSThread()
	return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
}
