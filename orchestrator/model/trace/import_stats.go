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
	// SkipNeverScheduled is a pod that was deleted while still pending: it
	// waited for GPUs and never held one.
	SkipNeverScheduled SkipReason = "never scheduled"
	// SkipShareWithoutGPU is a pod with a GPU share (gpu_milli) but no
	// GPU (num_gpu 0), which the published format does not have.
	SkipShareWithoutGPU SkipReason = "gpu_milli without num_gpu"
)

// ImportStats counts what an importer did with the rows of its input.
// Read == Kept + the sum of Skipped.
type ImportStats struct {
	Read    int                // data rows read (header and blank lines excluded)
	Kept    int                // rows that became jobs
	Skipped map[SkipReason]int // rows left out, by reason
	// SlotHours is what the kept jobs hold: slots × members × duration,
	// in hours. A slot of the GPU traces is a GPU, so these are their
	// GPU-hours as the simulator and the planner count them.
	SlotHours float64
	// ShareHours is SlotHours with a shared GPU counted at its share
	// (gpu_milli/1000) instead of whole; zero for traces without shares.
	ShareHours float64
	// SkippedSlotHours is, by reason, slots × the span from start to end
	// of the skipped rows that have both; rows without a span count zero.
	// For a pod never scheduled the span is its wait, held on no GPU.
	SkippedSlotHours map[SkipReason]float64
	// Readings counts the kept rows by how a field with more than one
	// reading was read ("start: scheduled_time"), so the figures can be
	// checked against the raw file.
	Readings map[string]int
	// Gangs counts the kept jobs of more than one member (Replicas > 1);
	// Labelled those that require worker labels (Requires).
	Gangs, Labelled int
}

// keep counts a kept job: its slot-hours are every member's.
func (s *ImportStats) keep(j Job) {
	s.Kept++
	s.SlotHours += float64(j.TotalSlots()) * j.Duration.Hours()
	if j.Members() > 1 {
		s.Gangs++
	}
	if len(j.Requires) > 0 {
		s.Labelled++
	}
}

func (s *ImportStats) skip(r SkipReason) {
	if s.Skipped == nil {
		s.Skipped = make(map[SkipReason]int)
	}
	s.Skipped[r]++
}

// skipHeld skips a row that spans hours slot-hours.
func (s *ImportStats) skipHeld(r SkipReason, hours float64) {
	s.skip(r)
	if hours <= 0 {
		return
	}
	if s.SkippedSlotHours == nil {
		s.SkippedSlotHours = make(map[SkipReason]float64)
	}
	s.SkippedSlotHours[r] += hours
}

func (s *ImportStats) read(how string) {
	if s.Readings == nil {
		s.Readings = make(map[string]int)
	}
	s.Readings[how]++
}

// Details are the lines that follow String when an importer reports
// hours and readings: what was kept, what was skipped in slot-hours, how
// many kept jobs are gangs or require labels, and how the fields were
// read, each in a fixed order.
func (s ImportStats) Details() []string {
	var out []string
	if s.SlotHours > 0 || len(s.SkippedSlotHours) > 0 {
		how := "slots x hours"
		if s.Gangs > 0 {
			how = "slots x members x hours"
		}
		line := fmt.Sprintf("kept %.1f slot-hours (%s)", s.SlotHours, how)
		if s.ShareHours > 0 {
			line += fmt.Sprintf(", %.1f with shared GPUs at their share", s.ShareHours)
		}
		out = append(out, line)
	}
	if len(s.SkippedSlotHours) > 0 {
		var parts []string
		for r, h := range s.SkippedSlotHours {
			part := fmt.Sprintf("%s %.1f", r, h)
			if r == SkipNeverScheduled {
				part += " (waited, none held)"
			}
			parts = append(parts, part)
		}
		slices.Sort(parts)
		out = append(out, "skipped slot-hours: "+strings.Join(parts, ", "))
	}
	var sized []string
	if s.Gangs > 0 {
		sized = append(sized, fmt.Sprintf("%d gangs (jobs of more than one member)", s.Gangs))
	}
	if s.Labelled > 0 {
		sized = append(sized, fmt.Sprintf("%d requiring worker labels", s.Labelled))
	}
	if len(sized) > 0 {
		out = append(out, "kept jobs: "+strings.Join(sized, ", "))
	}
	if len(s.Readings) > 0 {
		var parts []string
		for how, n := range s.Readings {
			parts = append(parts, fmt.Sprintf("%s %d", how, n))
		}
		slices.Sort(parts)
		out = append(out, "read: "+strings.Join(parts, ", "))
	}
	return out
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
