//go:build linux

package isolation

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// resolveDevice turns an IO limit's device or path into the MAJOR:MINOR the
// kernel throttles. The throttle works on whole disks only, so a partition
// stands for its disk: limiting /data on vda1 limits vda. sysBlock is
// /sys/dev/block (tests point it elsewhere).
func resolveDevice(l jobs.IOLimit, sysBlock string) (string, error) {
	switch {
	case l.Device != "" && deviceRE(l.Device):
		return wholeDisk(l.Device, sysBlock), nil
	case l.Device != "":
		var st unix.Stat_t
		if err := unix.Stat(l.Device, &st); err != nil {
			return "", fmt.Errorf("device %s: %w", l.Device, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFBLK {
			return "", fmt.Errorf("%s is not a block device", l.Device)
		}
		return wholeDisk(fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev)), sysBlock), nil
	}
	var st unix.Stat_t
	if err := unix.Stat(l.Path, &st); err != nil {
		return "", fmt.Errorf("path %s: %w", l.Path, err)
	}
	dev := fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	if unix.Major(st.Dev) == 0 {
		// tmpfs, overlayfs, NFS and the like: no block device to throttle.
		return "", fmt.Errorf("path %s is on a filesystem without a block device (%s): limit the device under it by name", l.Path, dev)
	}
	return wholeDisk(dev, sysBlock), nil
}

func deviceRE(s string) bool {
	a, b, ok := strings.Cut(s, ":")
	return ok && a != "" && b != "" && strings.Trim(a, "0123456789") == "" && strings.Trim(b, "0123456789") == ""
}

// wholeDisk maps a partition's MAJOR:MINOR to its disk's, through sysfs: a
// partition's directory sits inside its disk's and has a "partition" file.
func wholeDisk(dev, sysBlock string) string {
	link := filepath.Join(sysBlock, dev)
	if !exists(filepath.Join(link, "partition")) {
		return dev
	}
	real, err := filepath.EvalSymlinks(link)
	if err != nil {
		return dev
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(real), "dev"))
	if err != nil {
		return dev
	}
	return strings.TrimSpace(string(b))
}
