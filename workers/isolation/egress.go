//go:build linux

package isolation

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// tcMajor is the handle of the HTB qdisc the worker puts on the shaped
// device; a group's class is tcMajor:N.
const tcMajor = 0xba57

// egress shapes each group's network egress on one device with an HTB
// qdisc: a class per group with the group's rate as both its rate and its
// ceiling. Traffic is sorted into classes by cgroup, in the first way the
// kernel allows:
//
//   - net_cls: the group's cgroup gets the class as its net_cls.classid and
//     a "cgroup" tc filter reads it (needs the cls_cgroup classifier);
//   - net_prio: the group's cgroup maps the device to a priority equal to
//     the class's handle, and HTB sends a packet whose priority names one
//     of its classes straight there, with no filter at all.
//
// Both hierarchies are cgroup v1 only; the worker mounts the one it uses if
// the kernel has it and nothing mounted it yet, which works beside cgroup
// v2 too. Unclassified traffic (the worker's own, anything else on the
// machine) passes HTB unshaped, since the qdisc has no default class.
type egress struct {
	root, dev string
	wdir      string
	log       *slog.Logger

	mu sync.Mutex
	// ready: the qdisc is in place; how is "net_cls" or "net_prio"; err is
	// why neither works, once known.
	ready bool
	how   string
	err   error
	next  int               // the next class minor
	procs map[string]string // group → its cgroup.procs in the net hierarchy
}

func newEgress(root, dev, wdir string, log *slog.Logger) *egress {
	return &egress{root: root, dev: dev, wdir: wdir, log: log, next: 1, procs: map[string]string{}}
}

// limit shapes a group's egress to rate bytes per second.
func (e *egress) limit(group string, rate jobs.ByteSize) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return e.err
	}
	if !e.ready {
		if err := e.setup(); err != nil {
			e.err = err
			return err
		}
		e.ready = true
	}
	minor := e.next
	e.next++
	class := fmt.Sprintf("%x:%x", tcMajor, minor)
	bits := strconv.FormatInt(int64(rate)*8, 10) + "bit"
	if err := tc("class", "replace", "dev", e.dev, "parent", fmt.Sprintf("%x:", tcMajor), "classid", class, "htb", "rate", bits, "ceil", bits); err != nil {
		return fmt.Errorf("tc class for %s on %s: %w", group, e.dev, err)
	}
	dir := filepath.Join(e.root, e.how, parentName, e.wdir, group)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s cgroup: %w", e.how, err)
	}
	handle := uint32(tcMajor)<<16 | uint32(minor)
	var err error
	if e.how == "net_cls" {
		err = writeFile(filepath.Join(dir, "net_cls.classid"), strconv.FormatUint(uint64(handle), 10))
	} else {
		err = writeFile(filepath.Join(dir, "net_prio.ifpriomap"), fmt.Sprintf("%s %d", e.dev, handle))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", e.how, err)
	}
	e.procs[group] = filepath.Join(dir, "cgroup.procs")
	e.log.Info("egress shaped", "group", group, "device", e.dev, "rate_bytes_per_second", int64(rate), "class", class, "by", e.how)
	return nil
}

// setup puts the HTB qdisc on the device and finds how to classify.
func (e *egress) setup() error {
	if os.Geteuid() != 0 {
		return errors.New("shaping egress needs root (CAP_NET_ADMIN for tc, and mounting a net cgroup hierarchy)")
	}
	if _, err := exec.LookPath("tc"); err != nil {
		return errors.New("shaping egress needs tc (iproute2) on the PATH")
	}
	if e.dev == "" {
		dev, err := defaultRouteDevice()
		if err != nil {
			return err
		}
		e.dev = dev
	}
	if kind := rootQdisc(e.dev); kind != "" && !replaceable[kind] {
		return fmt.Errorf("%s already has a %s root qdisc that is not the worker's; it is left alone (remove it, or set qos.net_device to another device)", e.dev, kind)
	}
	handle := fmt.Sprintf("%x:", tcMajor)
	if err := tc("qdisc", "replace", "dev", e.dev, "root", "handle", handle, "htb"); err != nil {
		return fmt.Errorf("tc htb qdisc on %s: %w", e.dev, err)
	}
	mounted := exists(filepath.Join(e.root, "net_cls", "cgroup.procs"))
	var whyCls error
	if whyCls = e.mount("net_cls"); whyCls == nil {
		whyCls = tc("filter", "replace", "dev", e.dev, "parent", handle, "protocol", "all", "prio", "10", "handle", "1:", "cgroup")
		if whyCls == nil {
			e.how = "net_cls"
			return nil
		}
		whyCls = fmt.Errorf("the kernel has no cgroup tc classifier (cls_cgroup): %w", whyCls)
		if !mounted {
			// Mounted only to try it: an unused hierarchy is clutter.
			_ = syscall.Unmount(filepath.Join(e.root, "net_cls"), 0)
			_ = os.Remove(filepath.Join(e.root, "net_cls"))
		}
	}
	whyPrio := e.mount("net_prio")
	if whyPrio == nil {
		e.how = "net_prio"
		e.log.Info("egress classified by net_prio", "device", e.dev, "net_cls", whyCls.Error())
		return nil
	}
	_ = tc("qdisc", "del", "dev", e.dev, "root", "handle", handle)
	return fmt.Errorf("no way to sort a group's traffic into its class: net_cls: %v; net_prio: %v", whyCls, whyPrio)
}

// replaceable are the root qdiscs a device has by default: replacing one
// loses no one's configuration. htb may be the worker's own from before.
var replaceable = map[string]bool{"noqueue": true, "pfifo_fast": true, "fq_codel": true, "mq": true, "fq": true, "pfifo": true, "htb": true}

// mount makes sure the v1 hierarchy of ctl is mounted at root/ctl,
// mounting it if the kernel has the controller and no hierarchy holds it.
func (e *egress) mount(ctl string) error {
	dir := filepath.Join(e.root, ctl)
	if exists(filepath.Join(dir, "cgroup.procs")) {
		return nil
	}
	if exists(filepath.Join(e.root, "cgroup.controllers")) {
		// root is the v2 hierarchy itself: a directory made there is a
		// cgroup, not a mount point.
		return fmt.Errorf("%s is cgroup v2, where the v1 %s hierarchy has no mount point; shaping egress by cgroup on v2 needs eBPF, which the worker does not do", e.root, ctl)
	}
	hier, ok := cgroupHierarchy(ctl)
	switch {
	case !ok:
		return fmt.Errorf("the kernel has no %s controller (not in /proc/cgroups)", ctl)
	case hier != 0:
		return fmt.Errorf("%s is mounted with other controllers, not at %s", ctl, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("mkdir %s: %w", dir, err)
	}
	if err := syscall.Mount(ctl, dir, "cgroup", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ctl); err != nil {
		return fmt.Errorf("mount the %s hierarchy at %s: %w", ctl, dir, err)
	}
	e.log.Info("mounted a cgroup v1 hierarchy for egress shaping", "controller", ctl, "at", dir)
	return nil
}

// join is the cgroup.procs file a group's jobs join, if it is shaped.
func (e *egress) join(group string) string {
	if e == nil {
		return ""
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.procs[group]
}

// cleanStale removes the net hierarchy directories of workers that are
// gone (stale reports which), as the other hierarchies' are.
func (e *egress) cleanStale(stale func(string) bool) {
	for _, ctl := range []string{"net_cls", "net_prio"} {
		base := filepath.Join(e.root, ctl, parentName)
		entries, _ := os.ReadDir(base)
		for _, en := range entries {
			dir := filepath.Join(base, en.Name())
			if en.IsDir() && stale(en.Name()) {
				_ = removeTree(dir)
			}
		}
	}
}

// close removes the qdisc (the device's default comes back) and the
// worker's net cgroups.
func (e *egress) close() {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ready {
		_ = tc("qdisc", "del", "dev", e.dev, "root", "handle", fmt.Sprintf("%x:", tcMajor))
		e.ready = false
	}
	if e.how != "" {
		_ = removeTree(filepath.Join(e.root, e.how, parentName, e.wdir))
	}
}

func tc(args ...string) error {
	out, err := exec.Command("tc", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("tc %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// rootQdisc is the kind of the device's root qdisc ("" if unknown).
func rootQdisc(dev string) string {
	out, err := exec.Command("tc", "qdisc", "show", "dev", dev, "root").Output()
	if err != nil {
		return ""
	}
	f := strings.Fields(string(out))
	if len(f) >= 2 && f[0] == "qdisc" {
		return f[1]
	}
	return ""
}

// cgroupHierarchy reads /proc/cgroups: the hierarchy ID of ctl (0: in no
// v1 hierarchy) and whether the kernel has it at all.
func cgroupHierarchy(ctl string) (int, bool) {
	b, err := os.ReadFile("/proc/cgroups")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 4 && f[0] == ctl && f[3] == "1" {
			h, _ := strconv.Atoi(f[1])
			return h, true
		}
	}
	return 0, false
}

// defaultRouteDevice is the interface of the IPv4 default route: where
// a job's traffic to the outside leaves the machine.
func defaultRouteDevice() (string, error) {
	b, err := os.ReadFile("/proc/net/route")
	if err != nil {
		return "", fmt.Errorf("no device to shape: %w; set qos.net_device", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[1] == "00000000" {
			return f[0], nil
		}
	}
	return "", errors.New("no default route to find the device to shape; set qos.net_device")
}
