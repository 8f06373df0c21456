package trace

import (
	"fmt"
	"slices"
	"strings"
)

// SkipReason says why an importer left a row of a public trace out.
type SkipReason string

// The reasons importers count. A row is counted under the first reason that
// applies, in the order the importer's documentation lists them.
const (
	// SkipNoGPU is a pod that asks for no GPU (and CPU pods are not counted).
	SkipNoGPU SkipReason = "no GPU"
	// SkipMissingTime is a row without a time the job needs: a pod never
	// scheduled or not yet deleted, a job still waiting or running.
	SkipMissingTime SkipReason = "missing time"
	// SkipNonPositiveDuration is a row that ends when or before it starts.
	SkipNonPositiveDuration SkipReason = "non-positive duration"
	// SkipUnknownQoS is a pod whose qos is none of LS, Guaranteed, BE, Burstable.
	SkipUnknownQoS SkipReason = "unknown qos"
	// SkipStatus is a job whose status is not Terminated, Failed or Running.
	SkipStatus SkipReason = "status"
)

// ImportStats counts what an importer did with the rows of its input.
// Read == Kept + the sum of Skipped.
type ImportStats struct {
	Read    int                // data rows read (header and blank lines excluded)
	Kept    int                // rows that became jobs
	Skipped map[SkipReason]int // rows left out, by reason
}

func (s *ImportStats) skip(r SkipReason) {
	if s.Skipped == nil {
		s.Skipped = make(map[SkipReason]int)
	}
	s.Skipped[r]++
}

// String reads "read 10, kept 7, skipped 3 (missing time 2, no GPU 1)".
func (s ImportStats) String() string {
	total := 0
	reasons := make([]string, 0, len(s.Skipped))
	for r, n := range s.Skipped {
		total += n
		reasons = append(reasons, fmt.Sprintf("%s %d", r, n))
	}
	slices.Sort(reasons) // map order would make the line differ run to run
	out := fmt.Sprintf("read %d, kept %d, skipped %d", s.Read, s.Kept, total)
	if len(reasons) > 0 {
		out += " (" + strings.Join(reasons, ", ") + ")"
	}
	return out
}
