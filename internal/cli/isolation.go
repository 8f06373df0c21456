package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// isolationSummary is a worker's isolation in one cell: the cgroup version
// and how many configured limits are in force.
func isolationSummary(iso *queues.Isolation) string {
	if iso == nil {
		return "-"
	}
	in, out := iso.InForce()
	if in+out == 0 {
		return iso.Mode
	}
	return fmt.Sprintf("%s %d/%d limits", iso.Mode, in, in+out)
}

// writeIsolation prints which QoS limits a worker enforces and, for each
// that it does not, why: the operator reads this at start and in status.
func writeIsolation(w io.Writer, iso *queues.Isolation) {
	if iso == nil {
		return
	}
	fmt.Fprintf(w, "isolation: %s (requested %s)", iso.Mode, iso.Requested)
	if iso.Reason != "" {
		fmt.Fprintf(w, ": %s", iso.Reason)
	}
	fmt.Fprintln(w)
	for _, l := range iso.Limits {
		state := "in force"
		if !l.InForce {
			state = "NOT in force: " + l.Reason
		}
		fmt.Fprintf(w, "  %-10s %-34s %-14s %s\n", l.Group, l.Limit, l.Value, strings.TrimSpace(state))
	}
}

// qosRows are a job's QoS group, limits and what its last attempt's cgroup
// counted: where a slow job shows it was held back.
func qosRows(j jobs.Job) [][]any {
	var rows [][]any
	if j.Spec.QoS != "" {
		rows = append(rows, []any{"qos group", j.Spec.QoS})
	}
	if l := j.Spec.Limits; l != nil {
		rows = append(rows, []any{"job limits", limitsText(*l)})
	}
	q := j.QoS
	if q == nil {
		return rows
	}
	mem := q.PeakMemory.String()
	if q.MemoryLimit > 0 {
		mem += " of " + q.MemoryLimit.String()
	}
	if q.OOMKilled {
		mem += " (killed at the limit)"
	}
	return append(rows,
		[]any{"qos ran in", fmt.Sprintf("group %s (cgroup %s)", q.Group, q.Isolation)},
		[]any{"cpu", fmt.Sprintf("%.2fs used; throttled %.2fs (%d periods), its group %.2fs (%d periods)",
			q.CPUSeconds, q.ThrottledSeconds, q.ThrottledPeriods, q.GroupThrottledSeconds, q.GroupThrottledPeriods)},
		[]any{"io", fmt.Sprintf("read %s, written %s (counted by %s)", jobs.ByteSize(q.ReadBytes), jobs.ByteSize(q.WriteBytes), q.IOSource)},
		[]any{"peak memory", mem})
}

func limitsText(l jobs.Limits) string {
	var parts []string
	if l.CPUs > 0 {
		parts = append(parts, fmt.Sprintf("cpus %v", l.CPUs))
	}
	if l.Memory > 0 {
		parts = append(parts, "memory "+l.Memory.String())
	}
	for _, io := range l.IO {
		parts = append(parts, "io on "+io.Target())
	}
	return strings.Join(parts, ", ")
}
