//go:build linux

package isolation

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// v2 drives the unified hierarchy mounted at root. Every limit and counter
// is hierarchical there, so a job's cgroup nests in its group's for all of
// them, and a job starts inside its cgroup through clone3
// (SysProcAttr.UseCgroupFD), with no moment outside it.
type v2 struct {
	root string
	// available holds the controllers root offers (cgroup.controllers).
	available map[string]bool
}

func newV2(root string) *v2 {
	d := &v2{root: root, available: map[string]bool{}}
	b, _ := os.ReadFile(filepath.Join(root, "cgroup.controllers"))
	for _, c := range strings.Fields(string(b)) {
		d.available[c] = true
	}
	return d
}

func (d *v2) version() string { return "v2" }

func (d *v2) dir(rel string) string { return filepath.Join(d.root, parentName, rel) }

// v2Controllers are the controllers the worker turns on for its groups.
var v2Controllers = []string{"cpu", "memory", "io"}

// mkdir makes the cgroup and turns on the controllers for its children in
// every ancestor up from root: a controller works in a cgroup only when its
// parent delegates it. A job's cgroup is a leaf (the no-internal-process
// rule forbids processes where controllers are delegated), so it delegates
// nothing.
func (d *v2) mkdir(rel string, job bool) error {
	if err := os.MkdirAll(d.dir(rel), 0o755); err != nil {
		return fmt.Errorf("cgroup v2: %w", err)
	}
	if job {
		return nil
	}
	dirs := []string{d.root, filepath.Join(d.root, parentName)}
	p := filepath.Join(d.root, parentName)
	for _, part := range strings.Split(rel, "/") {
		p = filepath.Join(p, part)
		dirs = append(dirs, p)
	}
	var want []string
	for _, c := range v2Controllers {
		if d.available[c] {
			want = append(want, "+"+c)
		}
	}
	for _, dir := range dirs {
		ctl := filepath.Join(dir, "cgroup.subtree_control")
		if writeFile(ctl, strings.Join(want, " ")) == nil {
			continue
		}
		// The kernel takes all or none of a line: one at a time, so
		// one refused controller does not keep the others off.
		for _, c := range want {
			_ = writeFile(ctl, c)
		}
	}
	return nil
}

func (d *v2) enabled(dir, c string) bool {
	b, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	for _, f := range strings.Fields(string(b)) {
		if f == c || f == "+"+c {
			return true
		}
	}
	return false
}

// need checks that a controller is on in the cgroup's parent, which is
// what makes its files appear in the cgroup.
func (d *v2) need(rel, c string) error {
	if !d.available[c] {
		return fmt.Errorf("%w: cgroup v2 at %s offers no %s controller (cgroup.controllers lists %q)", errNotCgroup, d.root, c, d.list())
	}
	if parent := filepath.Dir(d.dir(rel)); !d.enabled(parent, c) {
		return fmt.Errorf("%w: the %s controller could not be delegated to %s (cgroup.subtree_control): is the worker's cgroup delegated to it?", errNotCgroup, c, parent)
	}
	return nil
}

func (d *v2) list() string {
	var cs []string
	for c := range d.available {
		cs = append(cs, c)
	}
	sort.Strings(cs)
	return strings.Join(cs, " ")
}

func (d *v2) setCPU(rel string, cpus float64) error {
	if err := d.need(rel, "cpu"); err != nil {
		return err
	}
	return writeFile(filepath.Join(d.dir(rel), "cpu.max"), fmt.Sprintf("%d %d", int64(cpus*cfsPeriod), cfsPeriod))
}

func (d *v2) setMemory(rel string, b jobs.ByteSize) error {
	if err := d.need(rel, "memory"); err != nil {
		return err
	}
	dir := d.dir(rel)
	if err := writeFile(filepath.Join(dir, "memory.max"), strconv.FormatInt(int64(b), 10)); err != nil {
		return err
	}
	// Swap would let a job run past its limit at the machine's expense.
	if p := filepath.Join(dir, "memory.swap.max"); exists(p) {
		if err := writeFile(p, "0"); err != nil {
			return fmt.Errorf("memory.swap.max: %w", err)
		}
	}
	return nil
}

func (d *v2) setIO(rel, dev string, l jobs.IOLimit, _ bool) error {
	if err := d.need(rel, "io"); err != nil {
		return err
	}
	line := dev
	for _, s := range []struct {
		key string
		v   int64
	}{{"rbps", int64(l.ReadBPS)}, {"wbps", int64(l.WriteBPS)}, {"riops", l.ReadIOPS}, {"wiops", l.WriteIOPS}} {
		if s.v > 0 {
			line += fmt.Sprintf(" %s=%d", s.key, s.v)
		}
	}
	return writeFile(filepath.Join(d.dir(rel), "io.max"), line)
}

func (d *v2) join(_, job string) ([]string, string) { return nil, d.dir(job) }

func (d *v2) stats(job string) (jobs.QoSStats, int64) {
	dir := d.dir(job)
	s := jobs.QoSStats{Isolation: "v2", IOSource: "cgroup"}
	if m, err := readKeyed(filepath.Join(dir, "cpu.stat")); err == nil {
		s.CPUSeconds = float64(m["usage_usec"]) / 1e6
		s.ThrottledSeconds = float64(m["throttled_usec"]) / 1e6
		s.ThrottledPeriods = m["nr_throttled"]
	}
	s.ReadBytes, s.WriteBytes = ioStat(filepath.Join(dir, "io.stat"))
	if v, err := readInt(filepath.Join(dir, "memory.peak")); err == nil {
		s.PeakMemory = jobs.ByteSize(v)
	}
	var oom int64
	if m, err := readKeyed(filepath.Join(dir, "memory.events")); err == nil {
		oom = m["oom_kill"]
	}
	return s, oom
}

func (d *v2) throttled(rel string) (float64, int64) {
	m, err := readKeyed(filepath.Join(d.dir(rel), "cpu.stat"))
	if err != nil {
		return 0, 0
	}
	return float64(m["throttled_usec"]) / 1e6, m["nr_throttled"]
}

// ioStat sums rbytes and wbytes over the devices of an io.stat file.
func ioStat(path string) (r, w int64) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		for _, f := range strings.Fields(sc.Text())[1:] {
			k, v, _ := strings.Cut(f, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "rbytes":
				r += n
			case "wbytes":
				w += n
			}
		}
	}
	return r, w
}

// kill uses cgroup.kill (Linux 5.14), which kills every process in the
// cgroup at once, forks racing with it included; on older kernels it kills
// what it lists until nothing is left.
func (d *v2) kill(job string) error {
	dir := d.dir(job)
	if exists(filepath.Join(dir, "cgroup.kill")) && writeFile(filepath.Join(dir, "cgroup.kill"), "1") == nil {
		return nil
	}
	for range 100 {
		pids := readPIDs(filepath.Join(dir, "cgroup.procs"))
		if len(pids) == 0 {
			return nil
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		// Real time: the kernel takes the killed processes out of the
		// cgroup on its own clock; the loop bounds the wait, not a clock.
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("processes left in %s", dir)
}

func (d *v2) workers() []string {
	var out []string
	entries, _ := os.ReadDir(filepath.Join(d.root, parentName))
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

func (d *v2) pids(rel string) []int { return treePIDs(d.dir(rel)) }

func (d *v2) remove(rel string) error { return removeTree(d.dir(rel)) }
