package jobs

import (
	"fmt"
	"regexp"
	"strings"
)

// Bounds on resource limits: they catch slips of the keyboard (a memory
// limit of 64 bytes, a CPU count meant as millicores), not real machines.
const (
	MinMemoryLimit = 4 << 20 // below this no process starts reliably
	MaxCPUs        = 4096
	MinIORate      = 4096 // bytes/s; the kernel's throttle works in pages
	MinEgressRate  = 1024 // bytes/s
)

var deviceRE = regexp.MustCompile(`^[0-9]+:[0-9]+$`)

// Limits are resource limits for a QoS group on one worker, or for one job
// within its group. A zero field sets no limit.
type Limits struct {
	// CPUs is how many cores' worth of CPU time may be used (0.5 is half a
	// core), enforced as a CFS quota.
	CPUs float64 `yaml:"cpus,omitempty" json:"cpus,omitempty"`
	// Memory is the most memory (resident and page cache) that may be
	// charged; past it the kernel reclaims, then kills.
	Memory ByteSize `yaml:"memory,omitempty" json:"memory,omitempty"`
	// IO limits storage throughput per device.
	IO []IOLimit `yaml:"io,omitempty" json:"io,omitempty"`
	// Egress is the network bandwidth (bytes per second) the group may send.
	// Only groups can have one: the kernel classifies traffic by group.
	Egress ByteSize `yaml:"egress,omitempty" json:"egress,omitempty"`
	// Required makes a limit that cannot be set an error: the worker then
	// fails jobs of the group (or this job) instead of running them
	// without it. Off by default: a limit is protection, not correctness.
	Required bool `yaml:"required,omitempty" json:"required,omitempty"`
}

// IOLimit limits reads and writes on one block device, named directly or
// as the device that holds a path (such as the data directory).
type IOLimit struct {
	// Device is a block device path (/dev/vda) or its MAJOR:MINOR.
	Device string `yaml:"device,omitempty" json:"device,omitempty"`
	// Path names the device holding this file or directory, resolved on
	// the worker at start (a partition stands for its whole disk, which is
	// what the kernel throttles).
	Path string `yaml:"path,omitempty" json:"path,omitempty"`
	// ReadBPS and WriteBPS are bytes per second; ReadIOPS and WriteIOPS
	// operations per second. Zero leaves that direction unlimited.
	ReadBPS   ByteSize `yaml:"read_bps,omitempty" json:"read_bps,omitempty"`
	WriteBPS  ByteSize `yaml:"write_bps,omitempty" json:"write_bps,omitempty"`
	ReadIOPS  int64    `yaml:"read_iops,omitempty" json:"read_iops,omitempty"`
	WriteIOPS int64    `yaml:"write_iops,omitempty" json:"write_iops,omitempty"`
}

// Target is how the limit names its device, for messages.
func (l IOLimit) Target() string {
	if l.Path != "" {
		return "path " + l.Path
	}
	return "device " + l.Device
}

// Empty reports whether the limits set nothing at all.
func (l Limits) Empty() bool {
	return l.CPUs == 0 && l.Memory == 0 && len(l.IO) == 0 && l.Egress == 0
}

// Validate checks limits declared at config path field and returns every
// problem found, or nil. job is true for a template's own limits, which
// may not set egress.
func (l Limits) Validate(field string, job bool) error {
	var ps problems
	l.validate(field, job, &ps)
	return ps.err()
}

func (l Limits) validate(field string, job bool, ps *problems) {
	if l.CPUs < 0 || l.CPUs > MaxCPUs {
		ps.add(field+".cpus", fmt.Sprintf("%v is out of range: cores of CPU time, above 0 and at most %d (0.5 is half a core)", l.CPUs, MaxCPUs))
	} else if l.CPUs > 0 && l.CPUs < 0.01 {
		ps.add(field+".cpus", fmt.Sprintf("%v is below 0.01 cores, the smallest quota the kernel keeps to; is it millicores? write 0.25 for a quarter core", l.CPUs))
	}
	if l.Memory < 0 || (l.Memory > 0 && l.Memory < MinMemoryLimit) {
		ps.add(field+".memory", fmt.Sprintf("%s is below %s; write it with a unit, like 512MiB", l.Memory, ByteSize(MinMemoryLimit)))
	}
	if l.Egress != 0 && job {
		ps.add(field+".egress", "a job cannot have its own egress limit: network traffic is shaped per QoS group; set it on the group under qos.groups")
	} else if l.Egress < 0 || (l.Egress > 0 && l.Egress < MinEgressRate) {
		ps.add(field+".egress", fmt.Sprintf("%s per second is below %s; write it with a unit, like 100MiB", l.Egress, ByteSize(MinEgressRate)))
	}
	seen := map[string]bool{}
	for i, io := range l.IO {
		f := fmt.Sprintf("%s.io[%d]", field, i)
		switch {
		case io.Device == "" && io.Path == "":
			ps.add(f, "name the device (device: /dev/vda or 8:0) or a path on it (path: /data)")
		case io.Device != "" && io.Path != "":
			ps.add(f+".path", "give device or path, not both")
		case io.Device != "" && !strings.HasPrefix(io.Device, "/dev/") && !deviceRE.MatchString(io.Device):
			ps.add(f+".device", fmt.Sprintf("%q is neither a /dev/ path nor MAJOR:MINOR (like 8:0)", io.Device))
		case io.Path != "" && !strings.HasPrefix(io.Path, "/"):
			ps.add(f+".path", fmt.Sprintf("%q is not absolute: the worker resolves it from its own working directory otherwise", io.Path))
		}
		key := io.Device + "\x00" + io.Path
		if seen[key] {
			ps.add(f, io.Target()+" is limited twice; merge the two entries")
		}
		seen[key] = true
		if io.ReadBPS == 0 && io.WriteBPS == 0 && io.ReadIOPS == 0 && io.WriteIOPS == 0 {
			ps.add(f, "sets no limit: give read_bps, write_bps, read_iops or write_iops")
		}
		for _, r := range []struct {
			name string
			v    ByteSize
		}{{"read_bps", io.ReadBPS}, {"write_bps", io.WriteBPS}} {
			if r.v < 0 || (r.v > 0 && r.v < MinIORate) {
				ps.add(f+"."+r.name, fmt.Sprintf("%s per second is below %s; write it with a unit, like 50MiB", r.v, ByteSize(MinIORate)))
			}
		}
		for _, r := range []struct {
			name string
			v    int64
		}{{"read_iops", io.ReadIOPS}, {"write_iops", io.WriteIOPS}} {
			if r.v < 0 {
				ps.add(f+"."+r.name, fmt.Sprintf("%d is negative: operations per second, 0 for no limit", r.v))
			}
		}
	}
}

// Within reports, as field problems, every limit of l (a job's) that is
// looser than the same limit of group, or set where the group has it too:
// a job's limits may only tighten its group's.
func (l Limits) within(field, groupName string, group Limits, ps *problems) {
	if group.CPUs > 0 && l.CPUs > group.CPUs {
		ps.add(field+".cpus", fmt.Sprintf("%v is above its QoS group %q's %v cores; a job's limit can only be tighter than its group's", l.CPUs, groupName, group.CPUs))
	}
	if group.Memory > 0 && l.Memory > group.Memory {
		ps.add(field+".memory", fmt.Sprintf("%s is above its QoS group %q's %s; a job's limit can only be tighter than its group's", l.Memory, groupName, group.Memory))
	}
}

// QoSStats is what a job's cgroup counted over its attempt, read from the
// cgroup's own counters when it ended: the job record keeps it, so a job
// that was slow can be seen to have been throttled.
type QoSStats struct {
	// Group is the QoS group the attempt ran in; Isolation the cgroup
	// version that enforced it (v1 or v2).
	Group     string `json:"group"`
	Isolation string `json:"isolation"`
	// CPUSeconds is CPU time used; ThrottledSeconds the time the CFS quota
	// held the job back, over ThrottledPeriods periods.
	CPUSeconds       float64 `json:"cpu_seconds"`
	ThrottledSeconds float64 `json:"cpu_throttled_seconds"`
	ThrottledPeriods int64   `json:"cpu_throttled_periods"`
	// GroupThrottledSeconds is how long the group's quota held the whole
	// group back while the attempt ran: where the limit is the group's,
	// the kernel counts throttling there, not in the job's cgroup.
	GroupThrottledSeconds float64 `json:"group_cpu_throttled_seconds"`
	GroupThrottledPeriods int64   `json:"group_cpu_throttled_periods"`
	// ReadBytes and WriteBytes are storage IO; IOSource says where they
	// were counted ("cgroup", or "process" where the job shares its
	// group's blkio cgroup under v1 and the kernel's per-process IO
	// accounting of the job's tree is used instead).
	ReadBytes  int64  `json:"io_read_bytes"`
	WriteBytes int64  `json:"io_write_bytes"`
	IOSource   string `json:"io_source,omitempty"`
	// PeakMemory is the most memory charged at once.
	PeakMemory ByteSize `json:"peak_memory"`
	// MemoryLimit is the limit that held (the job's own, else its
	// group's); OOMKilled is true when the kernel killed the job for it.
	MemoryLimit ByteSize `json:"memory_limit,omitempty"`
	OOMKilled   bool     `json:"oom_killed,omitempty"`
}
