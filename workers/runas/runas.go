// Package runas names the unprivileged user a root worker runs jobs as
// (worker.run_as, templates.NAME.run_as) and resolves it to the IDs the
// job supervisor switches to. It is a leaf so that config validation and
// the worker read the same syntax.
package runas

import (
	"errors"
	"fmt"
	"os/user"
	"regexp"
	"strconv"
	"strings"
)

// User is a resolved run_as: who a job runs as.
type User struct {
	// Spec is what the config said ("ballast-job", "1500:1500").
	Spec string
	// Name is the account's name; empty for a numeric spec with no
	// account.
	Name string
	UID  uint32
	GID  uint32
	// Groups are the supplementary groups, the primary one included, as
	// a login would give them. A numeric spec has the primary group only.
	Groups []uint32
	// Home is the account's home directory, the job's HOME. Empty when
	// no account is known; the job then has no HOME rather than the
	// worker's, a directory it could not use.
	Home string
}

// String is the spec with the IDs it stands for, for logs and errors.
func (u User) String() string {
	return fmt.Sprintf("%s (uid %d, gid %d)", u.Spec, u.UID, u.GID)
}

// nameRE is what useradd takes for a name (a trailing "$" is for Samba
// machine accounts).
var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?$`)

// Check reports a spec that cannot name an unprivileged user, without
// looking it up: the config is often checked on a machine that lacks the
// account. Root is refused in every form, because a job run as root can
// read the worker's memory, which is what run_as exists to prevent.
func Check(spec string) error {
	_, _, numeric, err := parse(spec)
	if err != nil {
		return err
	}
	if !numeric && spec == "root" {
		return errors.New(`"root" gives a job every privilege of the worker; name an unprivileged user`)
	}
	return nil
}

// parse splits a spec into numeric IDs (numeric true: "UID:GID", or a bare
// "UID" whose group is looked up) or a name.
func parse(spec string) (uid, gid uint64, numeric bool, err error) {
	if spec == "" {
		return 0, 0, false, errors.New("empty: name a user, or give UID:GID")
	}
	if u, g, ok := strings.Cut(spec, ":"); ok {
		uid, err1 := strconv.ParseUint(u, 10, 32)
		gid, err2 := strconv.ParseUint(g, 10, 32)
		if err1 != nil || err2 != nil {
			return 0, 0, false, fmt.Errorf("%q is not UID:GID (two numbers, like 1500:1500)", spec)
		}
		if uid == 0 || gid == 0 {
			return 0, 0, false, fmt.Errorf("%q is root's user or group; jobs would keep root's access: use unprivileged IDs", spec)
		}
		return uid, gid, true, nil
	}
	if n, perr := strconv.ParseUint(spec, 10, 32); perr == nil {
		if n == 0 {
			return 0, 0, false, errors.New(`"0" is root; name an unprivileged user`)
		}
		return n, 0, true, nil
	}
	if !nameRE.MatchString(spec) {
		return 0, 0, false, fmt.Errorf("%q is neither a user name nor UID:GID", spec)
	}
	return 0, 0, false, nil
}

// Lookup resolves spec on this machine: a name (or a bare UID) through the
// account database, with its primary and supplementary groups; UID:GID as
// it stands, with the account's home and groups if the UID has one and its
// primary group is that GID.
func Lookup(spec string) (User, error) {
	uid, gid, numeric, err := parse(spec)
	if err != nil {
		return User{}, err
	}
	var acct *user.User
	switch {
	case !numeric:
		if acct, err = user.Lookup(spec); err != nil {
			return User{}, fmt.Errorf("no user %q on this machine (create it, e.g. useradd --system --no-create-home %s, or give UID:GID): %w", spec, spec, err)
		}
	case gid == 0: // a bare UID: its account says the group
		if acct, err = user.LookupId(strconv.FormatUint(uid, 10)); err != nil {
			return User{}, fmt.Errorf("no user with UID %d on this machine (give UID:GID to run as IDs no account has): %w", uid, err)
		}
	default:
		if a, err := user.LookupId(strconv.FormatUint(uid, 10)); err == nil && a.Gid == strconv.FormatUint(gid, 10) {
			acct = a
		}
	}
	u := User{Spec: spec, UID: uint32(uid), GID: uint32(gid), Groups: []uint32{uint32(gid)}}
	if acct == nil {
		return u, nil
	}
	return fromAccount(spec, acct)
}

// fromAccount reads the IDs and groups of an account.
func fromAccount(spec string, a *user.User) (User, error) {
	uid, err := strconv.ParseUint(a.Uid, 10, 32)
	if err != nil {
		return User{}, fmt.Errorf("user %q has UID %q, not a number", spec, a.Uid)
	}
	gid, err := strconv.ParseUint(a.Gid, 10, 32)
	if err != nil {
		return User{}, fmt.Errorf("user %q has GID %q, not a number", spec, a.Gid)
	}
	if uid == 0 || gid == 0 {
		// An alias of root (toor, or a user put in group 0) would hand
		// the job root's files.
		return User{}, fmt.Errorf("user %q has UID %d and GID %d; a job run as root's user or group keeps root's access: name an unprivileged user", spec, uid, gid)
	}
	u := User{Spec: spec, Name: a.Username, UID: uint32(uid), GID: uint32(gid), Home: a.HomeDir}
	ids, err := a.GroupIds()
	if err != nil {
		return User{}, fmt.Errorf("groups of user %q: %w", spec, err)
	}
	u.Groups = []uint32{u.GID}
	for _, s := range ids {
		g, err := strconv.ParseUint(s, 10, 32)
		if err != nil || uint32(g) == u.GID {
			continue
		}
		if g == 0 {
			return User{}, fmt.Errorf("user %q is in group 0 (root's); a job in it keeps root's access to group-readable files: take it out of the group or name another user", spec)
		}
		u.Groups = append(u.Groups, uint32(g))
	}
	return u, nil
}
