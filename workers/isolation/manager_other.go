//go:build !linux

package isolation

import (
	"errors"
	"os"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// Manager outside Linux enforces nothing: cgroups are Linux's. It reports
// every configured limit as not in force, and refuses a required one.
type Manager struct {
	report queues.Isolation
	qos    jobs.QoS
}

// Open returns a Manager that runs jobs as they are; an explicit v1 or v2
// is an error.
func Open(o Options) (*Manager, error) {
	if o.Mode == V1 || o.Mode == V2 {
		return nil, errors.New("isolation.Open: cgroups exist only on Linux")
	}
	m := &Manager{qos: o.QoS, report: queues.Isolation{Requested: string(o.Mode), Mode: string(Off), Reason: "cgroups exist only on Linux"}}
	for _, name := range o.QoS.GroupNames() {
		m.report.Limits = append(m.report.Limits, queues.LimitState{Group: name, Limit: "all", Reason: m.report.Reason})
	}
	return m, nil
}

// Report says which limits are in force: none.
func (m *Manager) Report() queues.Isolation { return m.report }

// Enforcing is false.
func (m *Manager) Enforcing() bool { return false }

// Job returns no cgroup, or ErrRequired for a required group.
func (m *Manager) Job(group, _ string, own *jobs.Limits) (*Job, error) {
	if m.qos.Groups[group].Required || (own != nil && own.Required) {
		return nil, ErrRequired
	}
	return nil, nil
}

// Close does nothing.
func (m *Manager) Close() error { return nil }

// Job is never made outside Linux.
type Job struct{}

// Join is empty.
func (j *Job) Join() ([]string, string) { return nil, "" }

// Stats is empty.
func (j *Job) Stats() jobs.QoSStats { return jobs.QoSStats{} }

// MemoryKill is "".
func (j *Job) MemoryKill() string { return "" }

// Kill does nothing.
func (j *Job) Kill() error { return nil }

// Remove does nothing.
func (j *Job) Remove() error { return nil }

// OpenDir is not available.
func OpenDir(string) (*os.File, error) { return nil, errors.New("cgroups exist only on Linux") }
