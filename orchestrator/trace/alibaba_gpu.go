package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ballastdev/ballast/jobs"
)

// AlibabaGPUOptions tunes ReadAlibabaGPU2023.
type AlibabaGPUOptions struct {
	// Name is the trace's name; "alibaba-gpu-2023" when empty.
	Name string
	// Start becomes Trace.Start, the wall-clock time of the earliest
	// creation. The public trace publishes none, so it stays zero unless set.
	Start time.Time
	// CountCPUPods keeps pods that ask for no GPU, as jobs of
	// ceil(cpu_milli/1000) slots (at least 1), for studying a CPU pool.
	CountCPUPods bool
}

// alibabaGPUColumns are the columns ReadAlibabaGPU2023 uses. Others
// (memory_mib, pod_phase, a pandas index) may be present and are ignored:
// pod_phase adds nothing, since a pod that has not ended has no deletion time.
var alibabaGPUColumns = []string{"name", "cpu_milli", "num_gpu", "gpu_milli", "gpu_spec", "qos", "creation_time", "deletion_time", "scheduled_time"}

const (
	agName = iota
	agCPUMilli
	agNumGPU
	agGPUMilli
	agGPUSpec
	agQoS
	agCreation
	agDeletion
	agScheduled
)

// ReadAlibabaGPU2023 imports a pod list of the Alibaba GPU cluster trace
// 2023 (cluster-trace-gpu-v2023, files openb_pod_list*.csv), whose header
// names at least name, cpu_milli, num_gpu, gpu_milli, gpu_spec, qos,
// creation_time, deletion_time and scheduled_time (times in seconds).
//
// Each pod becomes a job:
//   - Class: qos LS or Guaranteed is core; BE or Burstable is burst.
//   - Slots: num_gpu when > 0; 1 for a GPU-sharing pod (num_gpu 0,
//     gpu_milli > 0), since a shared GPU still occupies a GPU slot.
//   - Submit: creation_time minus the earliest creation_time of kept pods.
//   - Duration: deletion_time - scheduled_time, the time it held resources.
//   - Team: the name's first dash-separated part ("openb" for
//     "openb-pod-0017"); "default" for a name without a dash.
//   - Template: gpu_spec ("V100M16|V100M32"), or "pod" when it is empty or
//     "nan" (no GPU type constraint).
//   - Checkpointable: burst pods; best-effort work is the kind written to
//     survive eviction.
//
// Rows are skipped, and counted under the first reason that applies, for:
// SkipNoGPU (no GPU and CountCPUPods off), SkipMissingTime (creation time
// missing, or scheduled or deletion time missing or 0), SkipNonPositiveDuration,
// SkipUnknownQoS. A malformed row (wrong field count, a number that is not
// one) is an error, a *ParseError: it means the file is not this format.
func ReadAlibabaGPU2023(r io.Reader, o AlibabaGPUOptions) (Trace, ImportStats, error) {
	t := Trace{Name: o.Name, Start: o.Start}
	if t.Name == "" {
		t.Name = "alibaba-gpu-2023"
	}
	var stats ImportStats
	lr := newLineReader(r)

	header, err := lr.next()
	if err == io.EOF {
		return Trace{}, stats, &ParseError{Line: 1, Err: errors.New("empty input, want an openb_pod_list header")}
	}
	if err != nil {
		return Trace{}, stats, err
	}
	fields, err := lr.split(header)
	if err != nil {
		return Trace{}, stats, err
	}
	width := len(fields)
	idx, err := columnIndex(fields, alibabaGPUColumns)
	if err != nil {
		return Trace{}, stats, &ParseError{Line: lr.line, Err: err}
	}

	strs := make(interner)
	minCreation := time.Duration(-1)
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Trace{}, stats, err
		}
		if stats.Read == MaxJobs {
			return Trace{}, stats, &ParseError{Line: lr.line, Err: fmt.Errorf("more than %d rows", MaxJobs)}
		}
		stats.Read++
		if fields, err = lr.split(line); err != nil {
			return Trace{}, stats, err
		}
		if len(fields) != width {
			return Trace{}, stats, &ParseError{Line: lr.line, Err: fmt.Errorf("has %d fields, the header %d", len(fields), width)}
		}
		j, reason, perr := alibabaGPUJob(fields, idx, o.CountCPUPods, strs)
		if perr != nil {
			perr.Line = lr.line
			return Trace{}, stats, perr
		}
		if reason != "" {
			stats.skip(reason)
			continue
		}
		stats.Kept++
		if minCreation < 0 || j.Submit < minCreation {
			minCreation = j.Submit
		}
		t.Jobs = append(t.Jobs, j)
	}
	for i := range t.Jobs {
		t.Jobs[i].Submit -= minCreation
	}
	SortJobs(t.Jobs)
	return t, stats, nil
}

// alibabaGPUJob converts one pod, its Submit still the absolute creation
// time. It returns a skip reason, or a *ParseError without a line number.
func alibabaGPUJob(f [][]byte, idx []int, countCPU bool, strs interner) (Job, SkipReason, *ParseError) {
	col := func(c int) []byte { return f[idx[c]] }
	bad := func(c int, err error) (Job, SkipReason, *ParseError) {
		return Job{}, "", &ParseError{Column: alibabaGPUColumns[c], Err: err}
	}
	var j Job
	numGPU, err := parseCount(orZero(col(agNumGPU)), MaxSlots)
	if err != nil {
		return bad(agNumGPU, err)
	}
	gpuMilli, err := parseCount(orZero(col(agGPUMilli)), 1<<30)
	if err != nil {
		return bad(agGPUMilli, err)
	}
	switch {
	case numGPU > 0:
		j.Slots = numGPU
	case gpuMilli > 0:
		j.Slots = 1
	case !countCPU:
		return Job{}, SkipNoGPU, nil
	default:
		cpuMilli, err := parseCount(orZero(col(agCPUMilli)), MaxSlots*1000)
		if err != nil {
			return bad(agCPUMilli, err)
		}
		j.Slots = max(1, (cpuMilli+999)/1000)
	}

	var times [3]time.Duration // creation, scheduled, deletion
	for i, c := range [3]int{agCreation, agScheduled, agDeletion} {
		v := col(c)
		if isMissing(v) {
			return Job{}, SkipMissingTime, nil
		}
		d, err := parseSeconds(v)
		if err != nil {
			return bad(c, err)
		}
		if d < 0 {
			return bad(c, errors.New("must be >= 0"))
		}
		if d == 0 && c != agCreation {
			// 0 is how the trace writes "never happened" for these two;
			// creation at 0 is simply the start of the trace.
			return Job{}, SkipMissingTime, nil
		}
		times[i] = d
	}
	j.Submit = times[0]
	j.Duration = times[2] - times[1]
	if j.Duration <= 0 {
		return Job{}, SkipNonPositiveDuration, nil
	}

	switch string(col(agQoS)) {
	case "LS", "Guaranteed":
		j.Class = jobs.ClassCore
	case "BE", "Burstable":
		j.Class = jobs.ClassBurst
	default:
		return Job{}, SkipUnknownQoS, nil
	}
	j.Checkpointable = j.Class == jobs.ClassBurst

	if team, _, ok := bytes.Cut(col(agName), []byte("-")); ok && len(team) > 0 {
		j.Team = strs.get(team)
	} else {
		j.Team = "default"
	}
	if spec := col(agGPUSpec); isMissing(spec) {
		j.Template = "pod"
	} else {
		j.Template = strs.get(spec)
	}
	return j, "", nil
}

// columnIndex finds each wanted column in a header.
func columnIndex(header [][]byte, want []string) ([]int, error) {
	idx := make([]int, len(want))
	var missing []string
	for i, w := range want {
		idx[i] = -1
		for k, h := range header {
			if string(bytes.TrimSpace(h)) == w {
				idx[i] = k
				break
			}
		}
		if idx[i] < 0 {
			missing = append(missing, w)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("header lacks column %s (want %s)", strings.Join(missing, ", "), strings.Join(want, ","))
	}
	return idx, nil
}

// isMissing is how exported tables write "no value": empty, pandas' "nan",
// or MySQL's "\N".
func isMissing(b []byte) bool {
	return len(b) == 0 || bytes.EqualFold(b, []byte("nan")) || string(b) == `\N`
}

// orZero reads a missing count as 0.
func orZero(b []byte) []byte {
	if isMissing(b) {
		return []byte("0")
	}
	return b
}
