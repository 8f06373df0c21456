//go:build linux

package isolation

import (
	"fmt"
	"path/filepath"
)

// pick chooses the driver for a mode. The v2 hierarchy is root itself on a
// pure v2 machine, or root/unified in the hybrid layout (v1 controllers
// with an empty v2 tree beside them). auto prefers v2, but only when it
// offers a controller: an empty v2 tree limits nothing. An explicit v1 or
// v2 that this machine cannot give is an error, since the operator asked
// for it by name; auto falls back, saying why.
func pick(mode Mode, root string) (driver, string, error) {
	v2root := root
	if !exists(filepath.Join(root, "cgroup.controllers")) {
		v2root = filepath.Join(root, "unified")
	}
	var two *v2
	var why2 string
	switch {
	case !exists(filepath.Join(v2root, "cgroup.controllers")):
		why2 = fmt.Sprintf("no cgroup v2 hierarchy at %s or %s", root, v2root)
	default:
		two = newV2(v2root)
		if !two.available["cpu"] && !two.available["memory"] && !two.available["io"] {
			why2 = fmt.Sprintf("cgroup v2 at %s has none of the cpu, memory and io controllers (they are bound to v1 hierarchies)", v2root)
			two = nil
		}
	}
	one := newV1(root)
	why1 := ""
	if !one.mounted[ctlCPU] && !one.mounted[ctlMemory] && !one.mounted[ctlBlkio] {
		why1 = fmt.Sprintf("no cgroup v1 cpu, memory or blkio hierarchy under %s", root)
	}
	switch mode {
	case Off:
		return nil, "isolation off (--isolation off)", nil
	case V2:
		if two == nil {
			return nil, "", fmt.Errorf("isolation v2: %s", why2)
		}
		return two, "", nil
	case V1:
		if why1 != "" {
			return nil, "", fmt.Errorf("isolation v1: %s", why1)
		}
		return one, "", nil
	}
	if two != nil {
		return two, "", nil
	}
	if why1 == "" {
		return one, "v1 because " + why2, nil
	}
	return nil, why2 + "; " + why1, nil
}
