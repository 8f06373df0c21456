//go:build linux

package isolation

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// Manager owns one worker's cgroups.
type Manager struct {
	d      driver
	opts   Options
	wdir   string
	report queues.Isolation
	net    *egress

	// lock is held for the worker's life: see holdLiveness.
	lock *os.File

	mu     sync.Mutex
	groups map[string]*group
}

// group is one QoS group on this worker.
type group struct {
	limits jobs.Limits
	// missing lists the group's limits that are not in force, for a
	// required group's refusal.
	missing []string
}

// Open chooses the cgroup version, removes what earlier workers left,
// creates the groups and sets their limits. With nothing to enforce
// (mode off, or auto on a machine without cgroups) it returns a Manager
// that runs jobs as they are and says so in its Report.
func Open(o Options) (*Manager, error) {
	if o.Root == "" {
		o.Root = DefaultRoot
	}
	if o.SysBlock == "" {
		o.SysBlock = "/sys/dev/block"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Mode == "" {
		o.Mode = Auto
	}
	d, why, err := pick(o.Mode, o.Root)
	if err != nil {
		return nil, fmt.Errorf("isolation.Open: %w", err)
	}
	m := &Manager{d: d, opts: o, wdir: dirName(o.WorkerID), groups: map[string]*group{}}
	m.report = queues.Isolation{Requested: string(o.Mode), Mode: string(Off), Reason: why}
	if d == nil {
		for _, name := range o.QoS.GroupNames() {
			m.refuseAll(name, o.QoS.Groups[name], "isolation is off: "+why)
		}
		return m, nil
	}
	if o.LockDir == "" {
		o.LockDir = DefaultLockDir
	}
	m.opts = o
	lock, lerr := holdLiveness(o.LockDir, m.wdir)
	if lerr != nil {
		// Without it, other workers may take this one's idle cgroups
		// for a dead worker's; and it removes no one else's.
		o.Logger.Warn("no liveness lock: other workers on this machine cannot tell this one's cgroups are in use", "err", lerr)
	}
	m.lock = lock
	// Creating the worker's own cgroup tells whether this process may
	// make cgroups at all (root, or a delegated subtree), once, rather
	// than as a warning per job.
	if err := d.mkdir(m.wdir, false); err != nil {
		if o.Mode != Auto {
			return nil, fmt.Errorf("isolation.Open: %w", err)
		}
		why := fmt.Sprintf("cannot create cgroups (%v): run the worker as root, or give it a delegated cgroup", err)
		m.d, m.report.Reason = nil, why
		for _, name := range o.QoS.GroupNames() {
			m.refuseAll(name, o.QoS.Groups[name], "isolation is off: "+why)
		}
		return m, nil
	}
	m.report.Mode = d.version()
	m.net = newEgress(o.Root, o.QoS.NetDevice, m.wdir, o.Logger)
	m.cleanStale()
	for _, name := range o.QoS.GroupNames() {
		m.makeGroup(name, o.QoS.Groups[name])
	}
	return m, nil
}

// dirName makes a worker ID safe as one path element.
func dirName(id string) string {
	return strings.NewReplacer("/", "_", "\x00", "_").Replace(id)
}

// cleanStale removes the cgroups of workers that are gone: any worker
// directory with no process left in it. Its own directory, left by an
// earlier process under the same ID, is cleared even of processes: the
// registry took that incarnation's jobs over, so whatever still runs there
// is a job running twice.
func (m *Manager) cleanStale() {
	for _, w := range m.d.workers() {
		if w == m.wdir {
			for _, pid := range m.d.pids(w) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		} else if !m.stale(w, m.d.pids(w)) {
			continue
		}
		if err := m.d.remove(w); err != nil {
			m.opts.Logger.Warn("could not remove a stale worker's cgroups", "worker", w, "err", err)
			continue
		}
		m.opts.Logger.Info("removed a stale worker's cgroups", "worker", w)
	}
	m.net.cleanStale(func(w string) bool {
		return w == m.wdir || m.stale(w, treePIDs(filepath.Join(m.net.root, "net_prio", parentName, w)))
	})
}

// stale reports whether another worker directory is a dead worker's: no
// process holds its liveness lock and no process runs in it (one that
// does, unlocked, is not ours to end). Without a lock of its own this
// worker cannot trust the locks' silence, and removes nothing.
func (m *Manager) stale(w string, pids []int) bool {
	return m.lock != nil && len(pids) == 0 && !alive(m.opts.LockDir, w)
}

func (m *Manager) refuseAll(name string, l jobs.Limits, why string) {
	g := &group{limits: l}
	for _, s := range limitStates(name, l) {
		s.Reason = why
		m.report.Limits = append(m.report.Limits, s)
		g.missing = append(g.missing, s.Limit)
	}
	m.groups[name] = g
}

// makeGroup creates a group's cgroup and sets each of its limits,
// recording each as in force or not, with the reason.
func (m *Manager) makeGroup(name string, l jobs.Limits) *group {
	g := &group{limits: l}
	m.groups[name] = g
	rel := m.wdir + "/" + name
	if err := m.d.mkdir(rel, false); err != nil {
		m.opts.Logger.Warn("could not create a QoS group's cgroup", "group", name, "err", err)
		for _, s := range limitStates(name, l) {
			s.Reason = err.Error()
			m.report.Limits = append(m.report.Limits, s)
			g.missing = append(g.missing, s.Limit)
		}
		return g
	}
	m.record(g, name, apply(m.d, rel, name, l, false, m.opts.SysBlock))
	if l.Egress > 0 {
		s := queues.LimitState{Group: name, Limit: "egress", Value: l.Egress.String() + "/s"}
		if err := m.net.limit(name, l.Egress); err != nil {
			s.Reason = err.Error()
		} else {
			s.InForce = true
		}
		m.record(g, name, []queues.LimitState{s})
	}
	return g
}

func (m *Manager) record(g *group, name string, states []queues.LimitState) {
	for _, s := range states {
		if !s.InForce {
			g.missing = append(g.missing, s.Limit)
			m.opts.Logger.Warn("QoS limit not in force", "group", name, "limit", s.Limit, "value", s.Value, "reason", s.Reason)
		}
		m.report.Limits = append(m.report.Limits, s)
	}
}

// limitStates lists the limits l sets, not yet in force.
func limitStates(name string, l jobs.Limits) []queues.LimitState {
	var out []queues.LimitState
	if l.CPUs > 0 {
		unit := " cores"
		if l.CPUs == 1 {
			unit = " core"
		}
		out = append(out, queues.LimitState{Group: name, Limit: "cpu", Value: strconv.FormatFloat(l.CPUs, 'f', -1, 64) + unit})
	}
	if l.Memory > 0 {
		out = append(out, queues.LimitState{Group: name, Limit: "memory", Value: l.Memory.String()})
	}
	for _, io := range l.IO {
		for _, s := range ioStates(io) {
			s.Group = name
			out = append(out, s)
		}
	}
	if l.Egress > 0 {
		out = append(out, queues.LimitState{Group: name, Limit: "egress", Value: l.Egress.String() + "/s"})
	}
	return out
}

func ioStates(io jobs.IOLimit) []queues.LimitState {
	var out []queues.LimitState
	for _, r := range []struct {
		name, v string
		set     bool
	}{
		{"read_bps", io.ReadBPS.String() + "/s", io.ReadBPS > 0}, {"write_bps", io.WriteBPS.String() + "/s", io.WriteBPS > 0},
		{"read_iops", strconv.FormatInt(io.ReadIOPS, 10), io.ReadIOPS > 0}, {"write_iops", strconv.FormatInt(io.WriteIOPS, 10), io.WriteIOPS > 0},
	} {
		if r.set {
			out = append(out, queues.LimitState{Limit: "io " + r.name + " " + io.Target(), Value: r.v})
		}
	}
	return out
}

// apply sets every limit of l but egress on the cgroup rel and reports each.
func apply(d driver, rel, name string, l jobs.Limits, job bool, sysBlock string) []queues.LimitState {
	var out []queues.LimitState
	set := func(s queues.LimitState, err error) {
		if err != nil {
			s.Reason = strings.TrimPrefix(err.Error(), errNotCgroup.Error()+": ")
		} else {
			s.InForce = true
		}
		out = append(out, s)
	}
	// limitStates lists cpu first, then memory, for those set.
	states := limitStates(name, l)
	if l.CPUs > 0 {
		set(states[0], d.setCPU(rel, l.CPUs))
		states = states[1:]
	}
	if l.Memory > 0 {
		set(states[0], d.setMemory(rel, l.Memory))
	}
	for _, io := range l.IO {
		dev, derr := resolveDevice(io, sysBlock)
		var err error
		if derr != nil {
			err = derr
		} else {
			err = d.setIO(rel, dev, io, job)
		}
		for _, s := range ioStates(io) {
			s.Group = name
			if dev != "" && io.Device != dev {
				s.Limit += " (" + dev + ")"
			}
			set(s, err)
		}
	}
	return out
}

// Report says which limits are in force. It is fixed at Open.
func (m *Manager) Report() queues.Isolation {
	r := m.report
	r.Limits = append([]queues.LimitState(nil), r.Limits...)
	return r
}

// Enforcing reports whether jobs run in cgroups at all.
func (m *Manager) Enforcing() bool { return m.d != nil }

// Job creates the cgroup of one attempt in its group, with the job's own
// limits. It returns nil, nil when isolation is off. A limit that cannot be
// set is logged and the job runs without it, unless it is required.
func (m *Manager) Job(groupName, key string, own *jobs.Limits) (*Job, error) {
	if m.d == nil {
		if g := m.groups[groupName]; g != nil && g.limits.Required {
			return nil, fmt.Errorf("%w: QoS group %q: %s", ErrRequired, groupName, m.report.Reason)
		}
		return nil, nil
	}
	m.mu.Lock()
	g := m.groups[groupName]
	if g == nil {
		// A placement group nobody declared: no limits, but its jobs are
		// still measured and ended through their cgroup.
		g = m.makeGroup(groupName, jobs.Limits{})
	}
	m.mu.Unlock()
	if g.limits.Required && len(g.missing) > 0 {
		return nil, fmt.Errorf("%w: QoS group %q: %s", ErrRequired, groupName, strings.Join(g.missing, ", "))
	}
	grel := m.wdir + "/" + groupName
	rel := grel + "/" + dirName(key)
	if err := m.d.mkdir(rel, true); err != nil {
		if g.limits.Required || (own != nil && own.Required) {
			return nil, fmt.Errorf("%w: job cgroup: %v", ErrRequired, err)
		}
		m.opts.Logger.Warn("job runs outside its QoS group: its cgroup could not be made", "group", groupName, "job", key, "err", err)
		return nil, nil
	}
	j := &Job{m: m, group: groupName, grel: grel, rel: rel, memory: g.limits.Memory}
	j.groupSeconds, j.groupPeriods = m.d.throttled(grel)
	if own != nil {
		for _, s := range apply(m.d, rel, groupName, *own, true, m.opts.SysBlock) {
			if !s.InForce {
				if own.Required {
					_ = m.d.remove(rel)
					return nil, fmt.Errorf("%w: job limit %s %s: %s", ErrRequired, s.Limit, s.Value, s.Reason)
				}
				m.opts.Logger.Warn("job limit not in force", "job", key, "limit", s.Limit, "value", s.Value, "reason", s.Reason)
				continue
			}
			j.Set = append(j.Set, s)
		}
		if own.Memory > 0 && (j.memory == 0 || own.Memory < j.memory) {
			j.memory = own.Memory
		}
	}
	return j, nil
}

// Close removes the worker's cgroups; call it once no job runs.
func (m *Manager) Close() error {
	if m == nil {
		return nil
	}
	defer releaseLiveness(m.lock)
	if m.d == nil {
		return nil
	}
	m.net.close()
	return m.d.remove(m.wdir)
}
