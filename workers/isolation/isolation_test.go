//go:build linux

package isolation

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// These tests run the drivers over a plain directory laid out like a
// cgroup filesystem: the same code writes the same files, so what it
// would set on a real v2 (or v1) machine can be checked on any machine.

func put(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return strings.TrimSpace(string(b))
}

// open opens a Manager with liveness locks in a directory of the test's
// own, and closes it when the test ends.
func open(t *testing.T, o Options) (*Manager, error) {
	t.Helper()
	o.LockDir = filepath.Join(t.TempDir(), "locks")
	m, err := Open(o)
	if err == nil {
		t.Cleanup(func() { _ = m.Close() })
	}
	return m, err
}

func fakeV2(t *testing.T, controllers string) string {
	root := t.TempDir()
	put(t, filepath.Join(root, "cgroup.controllers"), controllers)
	return root
}

func state(t *testing.T, r queues.Isolation, group, limit string) queues.LimitState {
	t.Helper()
	for _, l := range r.Limits {
		if l.Group == group && strings.HasPrefix(l.Limit, limit) {
			return l
		}
	}
	t.Fatalf("no %s %s in %+v", group, limit, r.Limits)
	return queues.LimitState{}
}

func TestV2SetsGroupAndJobLimits(t *testing.T) {
	root := fakeV2(t, "cpuset cpu io memory pids")
	m, err := open(t, Options{Mode: V2, Root: root, WorkerID: "w1", QoS: jobs.QoS{Groups: map[string]jobs.Limits{
		"burst": {CPUs: 0.5, Memory: 64 << 20, IO: []jobs.IOLimit{{Device: "8:0", ReadBPS: 10 << 20, WriteIOPS: 100}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	r := m.Report()
	if r.Mode != "v2" || r.Requested != "v2" {
		t.Errorf("report %+v, want mode v2", r)
	}
	for _, l := range r.Limits {
		if !l.InForce {
			t.Errorf("%s %s not in force: %s", l.Group, l.Limit, l.Reason)
		}
	}
	g := filepath.Join(root, "ballast", "w1", "burst")
	for file, want := range map[string]string{
		"cpu.max": "50000 100000", "memory.max": "67108864", "io.max": "8:0 rbps=10485760 wiops=100",
	} {
		if got := read(t, filepath.Join(g, file)); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	// Every ancestor delegates the controllers down to the group.
	for _, dir := range []string{root, filepath.Join(root, "ballast"), filepath.Join(root, "ballast", "w1"), g} {
		if got := read(t, filepath.Join(dir, "cgroup.subtree_control")); got != "+cpu +memory +io" {
			t.Errorf("%s subtree_control = %q", dir, got)
		}
	}

	j, err := m.Job("burst", "job1:2", &jobs.Limits{Memory: 32 << 20})
	if err != nil || j == nil {
		t.Fatalf("Job = %v, %v", j, err)
	}
	jd := filepath.Join(g, "job1:2")
	if got := read(t, filepath.Join(jd, "memory.max")); got != "33554432" {
		t.Errorf("job memory.max = %q", got)
	}
	if procs, dir := j.Join(); len(procs) != 0 || dir != jd {
		t.Errorf("Join = %v, %q; want the job's directory for clone3", procs, dir)
	}
	if msg := j.MemoryKill(); msg != "" {
		t.Errorf("MemoryKill before any OOM = %q", msg)
	}
	put(t, filepath.Join(jd, "memory.events"), "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n")
	put(t, filepath.Join(jd, "cpu.stat"), "usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\nnr_periods 30\nnr_throttled 3\nthrottled_usec 200000\n")
	put(t, filepath.Join(g, "cpu.stat"), "usage_usec 9000000\nnr_throttled 10\nthrottled_usec 700000\n")
	put(t, filepath.Join(jd, "io.stat"), "8:0 rbytes=1000 wbytes=500 rios=3 wios=1 dbytes=0 dios=0\n8:16 rbytes=24 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n")
	put(t, filepath.Join(jd, "memory.peak"), "33554000\n")
	if msg := j.MemoryKill(); msg != "killed: memory limit 32 MiB reached" {
		t.Errorf("MemoryKill = %q", msg)
	}
	st := j.Stats()
	want := jobs.QoSStats{Group: "burst", Isolation: "v2", CPUSeconds: 1.5, ThrottledSeconds: 0.2, ThrottledPeriods: 3,
		GroupThrottledSeconds: 0.7, GroupThrottledPeriods: 10, ReadBytes: 1024, WriteBytes: 500, IOSource: "cgroup",
		PeakMemory: 33554000, MemoryLimit: 32 << 20, OOMKilled: true}
	if st != want {
		t.Errorf("Stats = %+v\nwant    %+v", st, want)
	}
	put(t, filepath.Join(jd, "cgroup.kill"), "")
	if err := j.Kill(); err != nil || read(t, filepath.Join(jd, "cgroup.kill")) != "1" {
		t.Errorf("Kill did not write cgroup.kill: %v", err)
	}
	if err := j.Remove(); err != nil {
		t.Fatal(err)
	}
	if exists(jd) {
		t.Error("the job's cgroup is still there")
	}
	if err := m.Close(); err != nil || exists(filepath.Join(root, "ballast", "w1")) {
		t.Errorf("Close left the worker's cgroups: %v", err)
	}
}

func TestV2MissingControllerIsReportedNotClaimed(t *testing.T) {
	root := fakeV2(t, "memory pids")
	m, err := open(t, Options{Mode: Auto, Root: root, WorkerID: "w1", QoS: jobs.QoS{Groups: map[string]jobs.Limits{
		"core":  {CPUs: 2, Memory: 1 << 30},
		"burst": {CPUs: 1, Required: true},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	r := m.Report()
	if r.Mode != "v2" {
		t.Fatalf("mode %s, want v2 (it offers memory)", r.Mode)
	}
	if s := state(t, r, "core", "memory"); !s.InForce {
		t.Errorf("memory not in force: %s", s.Reason)
	}
	s := state(t, r, "core", "cpu")
	if s.InForce || !strings.Contains(s.Reason, "no cpu controller") {
		t.Errorf("cpu: %+v, want not in force, for want of the cpu controller", s)
	}
	if exists(filepath.Join(root, "ballast", "w1", "core", "cpu.max")) {
		t.Error("cpu.max written although the controller is not there")
	}
	// Not required: the job runs, without the limit.
	if j, err := m.Job("core", "a:1", nil); err != nil || j == nil {
		t.Errorf("Job in core = %v, %v; want a cgroup", j, err)
	}
	// Required: the job must not run without it.
	if _, err := m.Job("burst", "b:1", nil); !errors.Is(err, ErrRequired) || !strings.Contains(err.Error(), "cpu") {
		t.Errorf("Job in a required group with a missing limit = %v, want ErrRequired naming cpu", err)
	}
}

func TestAutoPicksV1WhenV2HasNoControllers(t *testing.T) {
	root := t.TempDir()
	put(t, filepath.Join(root, "unified", "cgroup.controllers"), "")
	for _, c := range []string{"cpu", "cpuacct", "memory", "blkio", "freezer"} {
		put(t, filepath.Join(root, c, "cgroup.procs"), "")
	}
	m, err := open(t, Options{Mode: Auto, Root: root, WorkerID: "w1", QoS: jobs.QoS{Groups: map[string]jobs.Limits{
		"tiny": {CPUs: 0.5, Memory: 64 << 20},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	r := m.Report()
	if r.Mode != "v1" || !strings.Contains(r.Reason, "has none of the cpu, memory and io controllers") {
		t.Errorf("report %+v, want v1 with the reason v2 was passed over", r)
	}
	if got := read(t, filepath.Join(root, "cpu", "ballast", "w1", "tiny", "cpu.cfs_quota_us")); got != "50000" {
		t.Errorf("cfs_quota_us = %q", got)
	}
	if got := read(t, filepath.Join(root, "memory", "ballast", "w1", "tiny", "memory.limit_in_bytes")); got != "67108864" {
		t.Errorf("limit_in_bytes = %q", got)
	}
	j, err := m.Job("tiny", "a:1", &jobs.Limits{IO: []jobs.IOLimit{{Device: "8:0", ReadBPS: 1 << 20}}})
	if err != nil {
		t.Fatal(err)
	}
	// Under v1 a job joins its group's blkio cgroup: the throttle is not
	// hierarchical there, so a job of its own would escape the group's.
	procs, dir := j.Join()
	if dir != "" || len(procs) != 5 || !strings.HasSuffix(procs[4], filepath.Join("blkio", "ballast", "w1", "tiny", "cgroup.procs")) {
		t.Errorf("Join = %v, %q", procs, dir)
	}
	if len(j.Set) != 0 {
		t.Errorf("a job IO limit under v1 reported as set: %+v", j.Set)
	}
	if exists(filepath.Join(root, "blkio", "ballast", "w1", "tiny", "a:1")) {
		t.Error("a job blkio cgroup was made under v1")
	}
}

func TestExplicitModeThatCannotBeHadIsAnError(t *testing.T) {
	root := t.TempDir()
	if _, err := open(t, Options{Mode: V2, Root: root}); err == nil || !strings.Contains(err.Error(), "no cgroup v2 hierarchy") {
		t.Errorf("Open v2 on a machine without it = %v", err)
	}
	if _, err := open(t, Options{Mode: V1, Root: root}); err == nil || !strings.Contains(err.Error(), "no cgroup v1") {
		t.Errorf("Open v1 on a machine without it = %v", err)
	}
	m, err := open(t, Options{Mode: Auto, Root: root, QoS: jobs.QoS{Groups: map[string]jobs.Limits{"g": {Memory: 1 << 30, Required: true}}}})
	if err != nil {
		t.Fatal(err)
	}
	r := m.Report()
	if r.Mode != "off" || len(r.Limits) != 1 || r.Limits[0].InForce || !strings.Contains(r.Limits[0].Reason, "isolation is off") {
		t.Errorf("auto without cgroups: %+v", r)
	}
	if _, err := m.Job("g", "a:1", nil); !errors.Is(err, ErrRequired) {
		t.Errorf("a required group without cgroups ran its job: %v", err)
	}
	if j, err := m.Job("other", "a:1", nil); j != nil || err != nil {
		t.Errorf("Job with isolation off = %v, %v; want none, no error", j, err)
	}
}

func TestStaleWorkersAreRemovedLiveOnesKept(t *testing.T) {
	root := fakeV2(t, "cpu memory io")
	put(t, filepath.Join(root, "ballast", "dead", "burst", "j:1", "cgroup.procs"), "")
	put(t, filepath.Join(root, "ballast", "live", "burst", "j:1", "cgroup.procs"), "4242\n")
	if _, err := open(t, Options{Mode: V2, Root: root, WorkerID: "w1"}); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(root, "ballast", "dead")) {
		t.Error("a dead worker's cgroups were kept")
	}
	if !exists(filepath.Join(root, "ballast", "live", "burst", "j:1")) {
		t.Error("a live worker's cgroups were removed")
	}
}

func TestResolveDevice(t *testing.T) {
	sys := t.TempDir()
	// vda1 is a partition of vda (254:0): its sysfs directory sits in the
	// disk's and has a partition file.
	put(t, filepath.Join(sys, "block", "vda", "dev"), "254:0\n")
	put(t, filepath.Join(sys, "block", "vda", "vda1", "partition"), "1\n")
	put(t, filepath.Join(sys, "block", "vda", "vda1", "dev"), "254:1\n")
	links := filepath.Join(sys, "dev-block")
	if err := os.MkdirAll(links, 0o755); err != nil {
		t.Fatal(err)
	}
	for dev, target := range map[string]string{"254:0": "block/vda", "254:1": "block/vda/vda1"} {
		if err := os.Symlink(filepath.Join(sys, target), filepath.Join(links, dev)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ in, want string }{{"254:1", "254:0"}, {"254:0", "254:0"}, {"8:0", "8:0"}} {
		got, err := resolveDevice(jobs.IOLimit{Device: tc.in}, links)
		if err != nil || got != tc.want {
			t.Errorf("resolveDevice(%s) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := resolveDevice(jobs.IOLimit{Path: "/proc/self"}, links); err == nil || !strings.Contains(err.Error(), "without a block device") {
		t.Errorf("a path on procfs resolved: %v", err)
	}
}

// An idle worker's cgroups hold no process; its liveness lock is what
// keeps a worker starting beside it from taking them for a dead one's.
func TestIdleLiveWorkerIsKeptByItsLock(t *testing.T) {
	root := fakeV2(t, "cpu memory io")
	locks := filepath.Join(t.TempDir(), "locks")
	a, err := Open(Options{Mode: V2, Root: root, WorkerID: "a", LockDir: locks, QoS: jobs.QoS{Groups: map[string]jobs.Limits{"g": {CPUs: 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(Options{Mode: V2, Root: root, WorkerID: "b", LockDir: locks})
	if err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(root, "ballast", "a", "g")) {
		t.Fatal("a live, idle worker's group was removed by a worker starting beside it")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	_ = b.Close()
	// a's process is gone (its lock released): its lock file goes with it.
	if entries, _ := os.ReadDir(locks); len(entries) != 0 {
		t.Errorf("lock files left: %v", entries)
	}
}
