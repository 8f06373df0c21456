package cli

import (
	"fmt"
	"io"
	"strings"

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
