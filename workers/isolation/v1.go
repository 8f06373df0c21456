//go:build linux

package isolation

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Hierarchies of cgroup v1 the worker uses.
const (
	ctlCPU     = "cpu"
	ctlCPUAcct = "cpuacct"
	ctlMemory  = "memory"
	ctlBlkio   = "blkio"
	ctlFreezer = "freezer"
)

// cfsPeriod is the CFS period the CPU quota is a share of: the kernel's
// default, 100ms, short enough that a throttled job stalls only briefly.
const cfsPeriod = 100_000 // µs

// v1 drives the cgroup v1 hierarchies mounted at root/CONTROLLER. Job
// cgroups nest in their group's in cpu, cpuacct, memory and freezer, whose
// limits and counters are hierarchical. blkio throttling is not
// hierarchical under v1 (a child's IO escapes its parent's limit), so jobs
// join their group's blkio cgroup directly: the group's limit then holds
// for all its jobs together, and a job's own IO bytes come from process
// accounting instead.
type v1 struct {
	root string
	// mounted holds the hierarchies found at start.
	mounted map[string]bool
}

func newV1(root string) *v1 {
	d := &v1{root: root, mounted: map[string]bool{}}
	for _, c := range []string{ctlCPU, ctlCPUAcct, ctlMemory, ctlBlkio, ctlFreezer} {
		d.mounted[c] = exists(filepath.Join(root, c, "cgroup.procs"))
	}
	return d
}

func (d *v1) version() string { return "v1" }

func (d *v1) dir(ctl, rel string) string { return filepath.Join(d.root, ctl, parentName, rel) }

// nested are the hierarchies where a job has a cgroup of its own.
var nested = []string{ctlCPU, ctlCPUAcct, ctlMemory, ctlFreezer}

func (d *v1) mkdir(rel string, job bool) error {
	ctls := append([]string{ctlBlkio}, nested...)
	if job {
		ctls = nested
	}
	for _, c := range ctls {
		if !d.mounted[c] {
			continue
		}
		if err := os.MkdirAll(d.dir(c, rel), 0o755); err != nil {
			return fmt.Errorf("cgroup v1 %s: %w", c, err)
		}
	}
	return nil
}

func (d *v1) need(ctl string) error {
	if !d.mounted[ctl] {
		return fmt.Errorf("%w: the cgroup v1 %s hierarchy is not mounted at %s", errNotCgroup, ctl, filepath.Join(d.root, ctl))
	}
	return nil
}

func (d *v1) setCPU(rel string, cpus float64) error {
	if err := d.need(ctlCPU); err != nil {
		return err
	}
	dir := d.dir(ctlCPU, rel)
	if err := writeFile(filepath.Join(dir, "cpu.cfs_period_us"), strconv.Itoa(cfsPeriod)); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "cpu.cfs_quota_us"), strconv.FormatInt(int64(cpus*cfsPeriod), 10))
}

func (d *v1) setMemory(rel string, b jobs.ByteSize) error {
	if err := d.need(ctlMemory); err != nil {
		return err
	}
	dir := d.dir(ctlMemory, rel)
	if err := writeFile(filepath.Join(dir, "memory.limit_in_bytes"), strconv.FormatInt(int64(b), 10)); err != nil {
		return err
	}
	// With swap accounting on, memory+swap gets the same limit, or a job
	// could swap its way past the limit (and the machine with it).
	if p := filepath.Join(dir, "memory.memsw.limit_in_bytes"); exists(p) {
		if err := writeFile(p, strconv.FormatInt(int64(b), 10)); err != nil {
			return fmt.Errorf("memory+swap: %w", err)
		}
	}
	return nil
}

func (d *v1) setIO(rel, dev string, l jobs.IOLimit, job bool) error {
	if job {
		return fmt.Errorf("%w: a job's own IO limit needs cgroup v2; under v1 blkio throttling is not hierarchical, so the job shares its group's limit", errNotCgroup)
	}
	if err := d.need(ctlBlkio); err != nil {
		return err
	}
	dir := d.dir(ctlBlkio, rel)
	for _, s := range []struct {
		file string
		v    int64
	}{
		{"blkio.throttle.read_bps_device", int64(l.ReadBPS)}, {"blkio.throttle.write_bps_device", int64(l.WriteBPS)},
		{"blkio.throttle.read_iops_device", l.ReadIOPS}, {"blkio.throttle.write_iops_device", l.WriteIOPS},
	} {
		if s.v == 0 {
			continue
		}
		if err := writeFile(filepath.Join(dir, s.file), fmt.Sprintf("%s %d", dev, s.v)); err != nil {
			return fmt.Errorf("%s: %w", s.file, err)
		}
	}
	return nil
}

func (d *v1) join(group, job string) ([]string, string) {
	var files []string
	for _, c := range nested {
		if d.mounted[c] {
			files = append(files, filepath.Join(d.dir(c, job), "cgroup.procs"))
		}
	}
	if d.mounted[ctlBlkio] {
		files = append(files, filepath.Join(d.dir(ctlBlkio, group), "cgroup.procs"))
	}
	return files, ""
}

func (d *v1) stats(job string) (jobs.QoSStats, int64) {
	s := jobs.QoSStats{Isolation: "v1", IOSource: "process"}
	if v, err := readInt(filepath.Join(d.dir(ctlCPUAcct, job), "cpuacct.usage")); err == nil {
		s.CPUSeconds = float64(v) / 1e9
	}
	s.ThrottledSeconds, s.ThrottledPeriods = d.throttled(job)
	if v, err := readInt(filepath.Join(d.dir(ctlMemory, job), "memory.max_usage_in_bytes")); err == nil {
		s.PeakMemory = jobs.ByteSize(v)
	}
	var oom int64
	if m, err := readKeyed(filepath.Join(d.dir(ctlMemory, job), "memory.oom_control")); err == nil {
		oom = m["oom_kill"]
	}
	return s, oom
}

func (d *v1) throttled(rel string) (float64, int64) {
	m, err := readKeyed(filepath.Join(d.dir(ctlCPU, rel), "cpu.stat"))
	if err != nil {
		return 0, 0
	}
	return float64(m["throttled_time"]) / 1e9, m["nr_throttled"]
}

// kill freezes the job's cgroup so nothing in it can fork, kills every
// process in it, and thaws it so the kills are delivered. Without the
// freezer hierarchy it kills what it lists, repeatedly, as the subreaper
// does.
func (d *v1) kill(job string) error {
	procs := filepath.Join(d.dir(ctlMemory, job), "cgroup.procs")
	if !d.mounted[ctlMemory] {
		procs = filepath.Join(d.dir(ctlCPU, job), "cgroup.procs")
	}
	if d.mounted[ctlFreezer] {
		fz := d.dir(ctlFreezer, job)
		procs = filepath.Join(fz, "cgroup.procs")
		if err := writeFile(filepath.Join(fz, "freezer.state"), "FROZEN"); err == nil {
			// Real time: the kernel freezes the tasks on its own clock,
			// and this package has no other.
			deadline := time.Now().Add(time.Second)
			for time.Now().Before(deadline) {
				b, _ := os.ReadFile(filepath.Join(fz, "freezer.state"))
				if strings.TrimSpace(string(b)) == "FROZEN" {
					break
				}
				time.Sleep(time.Millisecond)
			}
			for _, pid := range readPIDs(procs) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return writeFile(filepath.Join(fz, "freezer.state"), "THAWED")
		}
	}
	for range 100 {
		pids := readPIDs(procs)
		if len(pids) == 0 {
			return nil
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		// Real time: as in v2's kill, the kernel's pace is waited for.
		time.Sleep(time.Millisecond)
	}
	return fmt.Errorf("processes left in %s", procs)
}

func (d *v1) workers() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range append([]string{ctlBlkio}, nested...) {
		entries, _ := os.ReadDir(filepath.Join(d.root, c, parentName))
		for _, e := range entries {
			if e.IsDir() && !seen[e.Name()] {
				seen[e.Name()] = true
				out = append(out, e.Name())
			}
		}
	}
	return out
}

func (d *v1) pids(rel string) []int {
	var pids []int
	for _, c := range append([]string{ctlBlkio}, nested...) {
		if d.mounted[c] {
			pids = append(pids, treePIDs(d.dir(c, rel))...)
		}
	}
	return pids
}

func (d *v1) remove(rel string) error {
	var errs []error
	for _, c := range append([]string{ctlBlkio}, nested...) {
		if d.mounted[c] {
			if err := removeTree(d.dir(c, rel)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}
