//go:build linux

package workers_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/workers"
	"github.com/ballastdev/ballast/workers/isolation"
)

const cgroupRoot = "/sys/fs/cgroup"

// needV1 skips a test that needs writable cgroup v1 hierarchies (root, the
// cpu, cpuacct, memory, blkio and freezer controllers mounted), saying
// which is missing.
func needV1(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create cgroups")
	}
	for _, c := range []string{"cpu", "cpuacct", "memory", "blkio", "freezer"} {
		if _, err := os.Stat(filepath.Join(cgroupRoot, c, "cgroup.procs")); err != nil {
			t.Skipf("needs the cgroup v1 %s hierarchy at %s: %v", c, filepath.Join(cgroupRoot, c), err)
		}
	}
}

// isolated returns worker options enforcing qos with cgroup v1, under a
// worker ID of the test's own; the test fails if the worker leaves any of
// its cgroups behind.
func (e *env) isolated(qos jobs.QoS) workers.Options {
	e.t.Helper()
	o := e.options()
	o.ID = "qostest-" + e.ns
	o.QoS, o.Isolation = qos, isolation.V1
	e.t.Cleanup(func() {
		// Runs after the worker's Stop (cleanups run last first).
		for _, c := range []string{"cpu", "cpuacct", "memory", "blkio", "freezer"} {
			dir := filepath.Join(cgroupRoot, c, "ballast", o.ID)
			if _, err := os.Stat(dir); err == nil {
				e.t.Errorf("the worker left its cgroup %s", dir)
				_ = removeCgroupTree(dir)
			}
		}
	})
	return o
}

func removeCgroupTree(dir string) error {
	entries, _ := os.ReadDir(dir)
	for _, en := range entries {
		if en.IsDir() {
			_ = removeCgroupTree(filepath.Join(dir, en.Name()))
		}
	}
	return os.Remove(dir)
}

func TestQoSCPULimitV1(t *testing.T) {
	needV1(t)
	e := newEnv(t)
	w := e.start(e.isolated(jobs.QoS{Groups: map[string]jobs.Limits{"core": {CPUs: 0.5}}}))
	assertInForce(t, w, "core", "cpu")
	// The registry has what the worker enforces, for status and the
	// dashboard.
	ws, err := registry.New(e.store).Workers(context.Background())
	if err != nil || len(ws) != 1 || ws[0].Isolation == nil || ws[0].Isolation.Mode != "v1" || len(ws[0].Isolation.Limits) != 1 {
		t.Fatalf("registry = %+v, %v; want the worker with its v1 isolation", ws, err)
	}
	// Two busy loops: unlimited they would take both cores of this
	// machine, so only the quota holds them to half a core.
	const run = 3
	spec := e.shell(`timeout ` + strconv.Itoa(run) + ` sh -c 'while :; do :; done' & timeout ` + strconv.Itoa(run) + ` sh -c 'while :; do :; done'; wait; exit 0`)
	j := e.submit(spec, queues.QueueCore)
	got := e.waitTerminal(j.ID, 20*time.Second)
	if got.State != jobs.StateSucceeded || got.QoS == nil {
		t.Fatalf("state %s error %q qos %+v, want succeeded with counters", got.State, got.LastError, got.QoS)
	}
	// cpuacct.usage of the job's own cgroup, over the run's wall time.
	wall := got.FinishedAt.Sub(got.StartedAt).Seconds()
	cores := got.QoS.CPUSeconds / wall
	t.Logf("used %.2f CPU-seconds in %.2fs: %.2f cores; the group throttled %.2fs over %d periods", got.QoS.CPUSeconds, wall, cores, got.QoS.GroupThrottledSeconds, got.QoS.GroupThrottledPeriods)
	// The limit is the upper bound, always checked. The lower one says the
	// quota is not tighter than asked, which only holds when the machine
	// had half a core to give: on one busier than its cores (CI runs many
	// packages at once) a shortfall is contention, not the limit.
	switch {
	case cores > 0.6:
		t.Errorf("the job used %.2f cores, want 0.5 ± 0.1", cores)
	case cores < 0.4 && loadAverage() <= float64(runtime.NumCPU()):
		t.Errorf("the job used %.2f cores on a machine with room, want 0.5 ± 0.1", cores)
	case cores < 0.4:
		t.Logf("the job used %.2f cores on a machine loaded at %.1f for %d cores: the lower bound is not judged", cores, loadAverage(), runtime.NumCPU())
	}
	// A job that contention held under its quota was never throttled.
	if got.QoS.GroupThrottledPeriods == 0 && cores >= 0.4 {
		t.Errorf("no throttled period counted: %+v", got.QoS)
	}
	if got.QoS.Group != "core" || got.QoS.Isolation != "v1" {
		t.Errorf("qos group %q isolation %q, want core, v1", got.QoS.Group, got.QoS.Isolation)
	}
}

func TestQoSMemoryLimitKillsWithMessageV1(t *testing.T) {
	needV1(t)
	e := newEnv(t)
	w := e.start(e.isolated(jobs.QoS{Groups: map[string]jobs.Limits{"core": {Memory: 64 << 20}}}))
	assertInForce(t, w, "core", "memory")
	// tail keeps the whole of a line in memory, and /dev/zero has no
	// newline: 256 MiB of it is 256 MiB resident.
	hog := `head -c 256m /dev/zero | tail > /dev/null`
	for _, tc := range []struct {
		name string
		own  *jobs.Limits
		want string
	}{
		{"group limit", nil, "killed: memory limit 64 MiB reached"},
		{"job limit", &jobs.Limits{Memory: 32 << 20}, "killed: memory limit 32 MiB reached"},
	} {
		spec := e.shell(hog)
		spec.Limits = tc.own
		j := e.submit(spec, queues.QueueCore)
		got := e.waitTerminal(j.ID, 20*time.Second)
		if got.State != jobs.StateFailed || got.LastError != tc.want {
			t.Errorf("%s: state %s error %q, want failed with %q", tc.name, got.State, got.LastError, tc.want)
		}
		if got.QoS == nil || !got.QoS.OOMKilled || got.QoS.PeakMemory < got.QoS.MemoryLimit*9/10 {
			t.Errorf("%s: counters %+v, want an OOM kill with peak memory near the limit", tc.name, got.QoS)
		}
	}
	// A job within its limit is not called a memory kill.
	j := e.submit(e.shell(`head -c 8m /dev/zero | tail > /dev/null; exit 3`), queues.QueueCore)
	if got := e.waitTerminal(j.ID, 20*time.Second); got.LastError != "exited with code 3" {
		t.Errorf("a job within its limit failed with %q, want its exit code", got.LastError)
	}
}

var ddSeconds = regexp.MustCompile(`^(\d+) bytes .* copied, ([0-9.]+) s`)

func TestQoSStorageReadLimitV1(t *testing.T) {
	needV1(t)
	e := newEnv(t)
	const limit = 20 << 20
	data := filepath.Join(e.dir, "data")
	writeFile(t, data, 48<<20)
	w := e.start(e.isolated(jobs.QoS{Groups: map[string]jobs.Limits{
		"core": {IO: []jobs.IOLimit{{Path: e.dir, ReadBPS: limit}}},
	}}))
	assertInForce(t, w, "core", "io read_bps path "+e.dir)
	// Direct IO, so the page cache cannot serve the reads.
	j := e.submit(e.shell(`dd if="$BALLAST_PARAM_DIR/data" of=/dev/null bs=1M iflag=direct 2>&1`), queues.QueueCore)
	got := e.waitTerminal(j.ID, 20*time.Second)
	if got.State != jobs.StateSucceeded {
		t.Fatalf("state %s error %q, want succeeded", got.State, got.LastError)
	}
	var rate float64
	for _, l := range e.logs(j.ID) {
		if m := ddSeconds.FindStringSubmatch(l.Text); m != nil {
			n, _ := strconv.ParseFloat(m[1], 64)
			s, _ := strconv.ParseFloat(m[2], 64)
			rate = n / s
		}
	}
	t.Logf("read at %.1f MiB/s under a %d MiB/s limit; counted %d bytes read", rate/(1<<20), limit>>20, got.QoS.ReadBytes)
	// The throttle lets the first slice's worth (a fraction of a second)
	// through unmetered, which shows as a few percent over the limit on
	// a read this short; 10% more would be a limit that does not hold.
	if rate == 0 || rate > limit*1.1 {
		t.Errorf("read at %.1f MiB/s, want at most the %d MiB/s limit", rate/(1<<20), limit>>20)
	}
	if got.QoS == nil || got.QoS.ReadBytes < 48<<20 {
		t.Errorf("counters %+v, want at least the file's 48 MiB read", got.QoS)
	}
}

// A worker removes the cgroups a dead worker left, and its own from an
// earlier process under its ID; a live worker's are left alone.
func TestQoSCleansStaleCgroupsV1(t *testing.T) {
	needV1(t)
	e := newEnv(t)
	o := e.isolated(jobs.QoS{Groups: map[string]jobs.Limits{"core": {CPUs: 1}}})
	dead := filepath.Join(cgroupRoot, "memory", "ballast", "qostest-dead-"+e.ns, "burst", "job.1")
	mine := filepath.Join(cgroupRoot, "cpu", "ballast", o.ID, "core", "job.2")
	for _, d := range []string{dead, mine} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = removeCgroupTree(filepath.Dir(filepath.Dir(dead))) })
	e.start(o)
	for _, d := range []string{filepath.Dir(filepath.Dir(dead)), mine} {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("stale cgroup %s is still there", d)
		}
	}
}

func assertInForce(t *testing.T, w *workers.Worker, group, limit string) {
	t.Helper()
	iso := w.Isolation()
	if iso == nil {
		t.Fatal("the worker reports no isolation")
	}
	for _, l := range iso.Limits {
		if l.Group == group && strings.HasPrefix(l.Limit, limit) {
			if !l.InForce {
				t.Fatalf("limit %s of group %s not in force: %s", limit, group, l.Reason)
			}
			return
		}
	}
	t.Fatalf("limit %s of group %s not reported: %+v", limit, group, iso.Limits)
}

// writeFile writes n bytes of incompressible-enough data to path and syncs
// it, so reading it back with direct IO reads the disk.
func writeFile(t testing.TB, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for written := 0; written < n; written += len(buf) {
		if _, err := f.Write(buf); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// needV2 skips a test that needs cgroup v2 with the cpu and memory
// controllers, saying what this machine has instead.
func needV2(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create cgroups")
	}
	for _, root := range []string{cgroupRoot, filepath.Join(cgroupRoot, "unified")} {
		b, err := os.ReadFile(filepath.Join(root, "cgroup.controllers"))
		if err != nil {
			continue
		}
		cs := strings.Fields(string(b))
		if slices.Contains(cs, "cpu") && slices.Contains(cs, "memory") {
			return root
		}
		t.Skipf("cgroup v2 at %s offers controllers %q, not cpu and memory (they are bound to v1 hierarchies here); the v2 code path is covered by workers/isolation's tests over a fake root", root, cs)
	}
	t.Skip("no cgroup v2 hierarchy mounted")
	return ""
}

// On v2 the job is born in its cgroup through clone3 (UseCgroupFD) and
// killed for its memory limit with the same message.
func TestQoSLimitsV2(t *testing.T) {
	needV2(t)
	e := newEnv(t)
	o := e.options()
	o.ID = "qostest-" + e.ns
	o.QoS = jobs.QoS{Groups: map[string]jobs.Limits{"core": {CPUs: 0.5, Memory: 64 << 20}}}
	o.Isolation = isolation.V2
	w := e.start(o)
	assertInForce(t, w, "core", "cpu")
	assertInForce(t, w, "core", "memory")
	j := e.submit(e.shell(`timeout 2 sh -c 'while :; do :; done'; exit 0`), queues.QueueCore)
	got := e.waitTerminal(j.ID, 20*time.Second)
	if got.QoS == nil {
		t.Fatalf("no counters: %+v", got)
	}
	if cores := got.QoS.CPUSeconds / got.FinishedAt.Sub(got.StartedAt).Seconds(); cores < 0.4 || cores > 0.6 {
		t.Errorf("used %.2f cores, want 0.5 ± 0.1", cores)
	}
	j = e.submit(e.shell(`head -c 256m /dev/zero | tail > /dev/null`), queues.QueueCore)
	if got := e.waitTerminal(j.ID, 20*time.Second); got.LastError != "killed: memory limit 64 MiB reached" {
		t.Errorf("error %q, want the memory-limit kill", got.LastError)
	}
}

// A group's egress limit shapes its jobs' traffic on the configured
// device, here loopback: the test listens, the job sends, and the test
// times what arrives. Only the group's traffic is classified; everything
// else on the device passes the qdisc unshaped, and the device gets its
// own qdisc back when the worker stops.
func TestQoSEgressLimitLoopback(t *testing.T) {
	needV1(t)
	for _, tool := range []string{"tc", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	before, _ := exec.Command("tc", "qdisc", "show", "dev", "lo", "root").Output()
	e := newEnv(t)
	const rate = 1 << 20
	w := e.start(e.isolated(jobs.QoS{NetDevice: "lo", Groups: map[string]jobs.Limits{"core": {Egress: rate}}}))
	iso := w.Isolation()
	for _, l := range iso.Limits {
		if l.Limit == "egress" && !l.InForce {
			t.Skipf("egress not in force on this machine: %s", l.Reason)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type result struct {
		n   int64
		dur time.Duration
	}
	got := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- result{}
			return
		}
		defer c.Close()
		buf := make([]byte, 64<<10)
		var n int64
		var first time.Time
		for {
			k, err := c.Read(buf)
			if k > 0 && first.IsZero() {
				first = time.Now()
			}
			n += int64(k)
			if err != nil {
				break
			}
		}
		got <- result{n, time.Since(first)}
	}()
	const size = 3 << 20
	port := ln.Addr().(*net.TCPAddr).Port
	j := e.submit(e.shell(`exec bash -c 'head -c `+strconv.Itoa(size)+` /dev/zero > /dev/tcp/127.0.0.1/`+strconv.Itoa(port)+`'`), queues.QueueCore)
	job := e.waitTerminal(j.ID, 30*time.Second)
	if job.State != jobs.StateSucceeded {
		t.Fatalf("sender %s: %s", job.State, job.LastError)
	}
	var r result
	select {
	case r = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the listener got no end of stream")
	}
	if r.n != size {
		t.Fatalf("received %d bytes, want %d", r.n, size)
	}
	measured := float64(r.n) / r.dur.Seconds()
	t.Logf("sent %d MiB at %.2f MiB/s under a %.0f MiB/s egress limit", r.n>>20, measured/(1<<20), float64(rate)/(1<<20))
	// HTB lets one burst (a few KiB at this rate) through ahead of the
	// rate; over 3 MiB that is well under 10%.
	if measured > rate*1.1 || measured < rate*0.5 {
		t.Errorf("sent at %.2f MiB/s, want about the %.0f MiB/s limit", measured/(1<<20), float64(rate)/(1<<20))
	}
	w.Stop()
	after, _ := exec.Command("tc", "qdisc", "show", "dev", "lo", "root").Output()
	if string(after) != string(before) {
		t.Errorf("lo's qdisc after the worker stopped:\n%s\nwant it as before:\n%s", after, before)
	}
}

// A limit that cannot be set is reported not in force and the job runs
// without it, unless its group is required: then the job fails, saying
// which limit is missing.
func TestQoSRequiredLimitNotInForceFailsTheJob(t *testing.T) {
	needV1(t)
	e := newEnv(t)
	w := e.start(e.isolated(jobs.QoS{NetDevice: "nosuchdev0", Groups: map[string]jobs.Limits{
		"core":  {CPUs: 1, Egress: 1 << 20, Required: true},
		"burst": {CPUs: 1, Egress: 1 << 20},
	}}))
	for _, l := range w.Isolation().Limits {
		if l.Limit == "egress" && (l.InForce || !strings.Contains(l.Reason, "nosuchdev0")) {
			t.Errorf("egress on a missing device: %+v, want not in force, naming the device", l)
		}
	}
	j := e.submit(e.shell(`exit 0`), queues.QueueCore)
	want := `required QoS limit not in force: QoS group "core": egress`
	if got := e.waitTerminal(j.ID, wait); got.State != jobs.StateFailed || got.LastError != want {
		t.Errorf("required group: state %s error %q, want failed with %q", got.State, got.LastError, want)
	}
	spec := e.shell(`exit 0`)
	spec.Class = jobs.ClassBurst
	j = e.submit(spec, queues.QueueLoan)
	if got := e.waitTerminal(j.ID, wait); got.State != jobs.StateSucceeded {
		t.Errorf("group not required: state %s error %q, want it to run without the limit", got.State, got.LastError)
	}
}

// loadAverage is the machine's 1-minute load average, 0 when unknown.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	return f
}
