package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
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

// alibabaGPUColumns are the columns ReadAlibabaGPU2023 needs. Others (a
// pandas index) may be present and are ignored; pod_phase, when present,
// tells a pod deleted while pending from one that ran, and memory_mib
// gives a pod's memory.
var alibabaGPUColumns = []string{"name", "cpu_milli", "num_gpu", "gpu_milli", "gpu_spec", "qos", "creation_time", "deletion_time", "scheduled_time"}

// alibabaGPUPhase and alibabaGPUMemory are the optional pod_phase and
// memory_mib columns.
const (
	alibabaGPUPhase  = "pod_phase"
	alibabaGPUMemory = "memory_mib"
)

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

// How ReadAlibabaGPU2023 read a kept pod's fields, as ImportStats.Readings
// counts them.
const (
	readStartScheduled = "start: scheduled_time"
	readStartCreation  = "start: creation_time (no scheduled_time)"
	readEndDeletion    = "end: deletion_time"
	readEndTraceEnd    = "end: trace end (no deletion_time)"
	readWholeGPUs      = "GPUs: whole"
	readSharedGPU      = "GPUs: shared (gpu_milli < 1000), at their share"
	readCPUPod         = "CPU pod: ceil(cpu_milli/1000) slots"
	readModelOne       = "gpu_spec: one model, required as gpu_model"
	readModelList      = "gpu_spec: a list of models, any of them required as gpu_model"
	readModelAny       = "gpu_spec: empty, none required"
)

// GPUModelLabel is the label a job of a GPU trace requires of its worker
// when the trace names the one GPU model it runs on (Job.Requires).
const GPUModelLabel = "gpu_model"

// ReadAlibabaGPU2023 imports a pod list of the Alibaba GPU cluster trace
// 2023 (cluster-trace-gpu-v2023, files openb_pod_list*.csv), whose header
// names at least name, cpu_milli, num_gpu, gpu_milli, gpu_spec, qos,
// creation_time, deletion_time and scheduled_time (times in seconds from
// the trace start), and usually pod_phase.
//
// Every pod that holds GPUs for a known time becomes a job:
//   - Slots: num_gpu, the GPUs of the pod. A shared GPU (num_gpu 1,
//     gpu_milli < 1000, a fraction of one GPU) is one slot with Share
//     gpu_milli: the simulator packs shares onto a GPU as a GPU worker
//     does, and a GPU that a pod shares is not free for a whole-GPU pod.
//     The stats give the GPU-hours both ways (SlotHours, ShareHours) and
//     count the shared pods among the readings. A pod is never a gang
//     (Replicas 0): the trace lists pods, one member each.
//   - CPUs and Memory: cpu_milli / 1000 and memory_mib (when the column
//     is there) of a GPU pod; they bind only on pools that declare what
//     their workers offer.
//   - Requires: gpu_model set to gpu_spec: one model ("A10"), or a list of
//     acceptable models ("V100M16|V100M32"), which is how a requirement
//     names the values it accepts (jobs.AnyOf), so the pod runs on any of
//     them. An empty gpu_spec requires none, nor do CPU pods kept by
//     CountCPUPods.
//   - Start: scheduled_time, when the pod got its GPUs. A pod without one
//     (missing, or 0 for a pod created after the trace start: 0 is how the
//     trace writes "never") was deleted while pending if pod_phase says
//     Pending: it waited and never held a GPU, and is skipped. Otherwise,
//     or without a pod_phase column, it starts at creation_time.
//   - End: deletion_time. A pod without one (missing or 0) was still
//     running when the trace ended, and ends at the trace end, the latest
//     time in the file: it held its GPUs at least that long, and leaving
//     it out would drop the longest-running pods.
//   - Submit: creation_time minus the earliest creation_time of kept pods;
//     Duration: end - start, the time it held its GPUs.
//   - Class: qos LS or Guaranteed is core; BE or Burstable is burst.
//   - Team: the name's first dash-separated part ("openb" for
//     "openb-pod-0017"); "default" for a name without a dash.
//   - Template: gpu_spec ("V100M16|V100M32"), or "pod" when it is empty or
//     "nan" (no GPU type constraint).
//   - Checkpointable: burst pods; best-effort work is the kind written to
//     survive eviction.
//
// Rows are skipped, and counted under the first reason that applies, for:
// SkipShareWithoutGPU (gpu_milli without num_gpu), SkipNoGPU (num_gpu 0, a
// CPU-only pod, unless CountCPUPods keeps it as ceil(cpu_milli/1000)
// slots), SkipMissingTime (no creation time), SkipNeverScheduled,
// SkipUnknownQoS and SkipNonPositiveDuration. The stats count each kept
// pod's readings of the fields above and the slot-hours kept and skipped.
// A malformed row (wrong field count, a number that is not one) is an
// error, a *ParseError: it means the file is not this format.
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
	phase, memory := -1, -1
	if i, err := columnIndex(fields, []string{alibabaGPUPhase}); err == nil {
		phase = i[0]
	}
	if i, err := columnIndex(fields, []string{alibabaGPUMemory}); err == nil {
		memory = i[0]
	}

	strs := make(interner)
	models := labelInterner{key: GPUModelLabel, m: make(requiresInterner)}
	minCreation := time.Duration(-1)
	keep := func(p gpuPod) {
		stats.keep(p.job)
		stats.ShareHours += p.share * p.job.Duration.Hours()
		for _, how := range p.readings {
			stats.read(how)
		}
		if minCreation < 0 || p.job.Submit < minCreation {
			minCreation = p.job.Submit
		}
		t.Jobs = append(t.Jobs, p.job)
	}
	// Pods still running wait for the trace end, the latest time of all rows.
	var running []gpuPod
	var traceEnd time.Duration
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
		p, perr := alibabaGPUPod(fields, idx, phase, memory, o.CountCPUPods, strs, models)
		if perr != nil {
			perr.Line = lr.line
			return Trace{}, stats, perr
		}
		traceEnd = max(traceEnd, p.latest)
		switch {
		case p.skip != "":
			stats.skipHeld(p.skip, p.spanHours)
		case p.running:
			running = append(running, p)
		default:
			keep(p)
		}
	}
	for _, p := range running {
		if p.job.Duration = traceEnd - p.start; p.job.Duration <= 0 {
			stats.skip(SkipNonPositiveDuration) // started as the trace ended
			continue
		}
		keep(p)
	}
	for i := range t.Jobs {
		t.Jobs[i].Submit -= minCreation
	}
	SortJobs(t.Jobs)
	return t, stats, nil
}

// gpuPod is one row read: a job (its Submit still the absolute creation
// time) or the reason it is skipped.
type gpuPod struct {
	job Job
	// start is when the pod got its GPUs; running means it had not ended
	// by the trace end, so its Duration waits for that.
	start   time.Duration
	running bool
	// share is the GPUs it asked for with shares counted as such.
	share    float64
	readings [4]string
	skip     SkipReason
	// spanHours is slots x the span of a skipped row, 0 without a span.
	spanHours float64
	// latest is the latest time the row gives.
	latest time.Duration
}

// alibabaGPUPod reads one pod. The *ParseError has no line number.
func alibabaGPUPod(f [][]byte, idx []int, phase, memory int, countCPU bool, strs interner, models labelInterner) (gpuPod, *ParseError) {
	col := func(c int) []byte { return f[idx[c]] }
	bad := func(c int, err error) (gpuPod, *ParseError) {
		return gpuPod{}, &ParseError{Column: alibabaGPUColumns[c], Err: err}
	}
	var p gpuPod
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
		p.job.Slots = numGPU
		// What the pod asked for beyond its GPUs: it binds only on pools
		// that declare their workers' CPUs and memory.
		cpuMilli, err := parseCount(orZero(col(agCPUMilli)), MaxSlots*1000)
		if err != nil {
			return bad(agCPUMilli, err)
		}
		p.job.CPUs = float64(cpuMilli) / 1000
		if memory >= 0 {
			mib, err := parseCount(orZero(f[memory]), 1<<30)
			if err != nil {
				return gpuPod{}, &ParseError{Column: alibabaGPUMemory, Err: err}
			}
			p.job.Memory = int64(mib) << 20
		}
		// A missing or zero gpu_milli on a GPU pod is read as whole GPUs.
		if gpuMilli > 0 && gpuMilli < 1000 {
			p.share = float64(numGPU) * float64(gpuMilli) / 1000
			p.readings[2] = readSharedGPU
			if numGPU == 1 {
				p.job.Share = gpuMilli
			}
		} else {
			p.share = float64(numGPU)
			p.readings[2] = readWholeGPUs
		}
	case gpuMilli > 0:
		p.skip = SkipShareWithoutGPU
	case !countCPU:
		p.skip = SkipNoGPU
	default:
		cpuMilli, err := parseCount(orZero(col(agCPUMilli)), MaxSlots*1000)
		if err != nil {
			return bad(agCPUMilli, err)
		}
		p.job.Slots = max(1, (cpuMilli+999)/1000)
		p.share = float64(p.job.Slots)
		p.readings[2] = readCPUPod
	}

	// Times: each is absent when missing; scheduled and deletion also
	// when 0 after a creation past 0 (0 is the trace's "never").
	var times [3]time.Duration // creation, scheduled, deletion
	var has [3]bool
	for i, c := range [3]int{agCreation, agScheduled, agDeletion} {
		v := col(c)
		if isMissing(v) {
			continue
		}
		d, err := parseSeconds(v)
		if err != nil {
			return bad(c, err)
		}
		if d < 0 {
			return bad(c, errors.New("must be >= 0"))
		}
		times[i], has[i] = d, true
		p.latest = max(p.latest, d)
	}
	creation, scheduled, deletion := times[0], times[1], times[2]
	hasCreation := has[0]
	hasScheduled := has[1] && (scheduled > 0 || (hasCreation && creation == 0))
	hasDeletion := has[2] && deletion > 0
	if p.skip != "" {
		return p, nil
	}
	if !hasCreation {
		p.skip = SkipMissingTime
		return p, nil
	}
	p.job.Submit = creation
	switch {
	case hasScheduled:
		p.start, p.readings[0] = scheduled, readStartScheduled
	case phase >= 0 && string(f[phase]) == "Pending":
		p.skip = SkipNeverScheduled
		if hasDeletion && deletion > creation {
			p.spanHours = float64(p.job.Slots) * (deletion - creation).Hours()
		}
		return p, nil
	default:
		p.start, p.readings[0] = creation, readStartCreation
	}
	if hasDeletion {
		p.job.Duration, p.readings[1] = deletion-p.start, readEndDeletion
	} else {
		p.running, p.readings[1] = true, readEndTraceEnd
	}

	switch string(col(agQoS)) {
	case "LS", "Guaranteed":
		p.job.Class = jobs.ClassCore
	case "BE", "Burstable":
		p.job.Class = jobs.ClassBurst
	default:
		p.skip = SkipUnknownQoS
		if !p.running && p.job.Duration > 0 {
			p.spanHours = float64(p.job.Slots) * p.job.Duration.Hours()
		}
		return p, nil
	}
	if !p.running && p.job.Duration <= 0 {
		p.skip = SkipNonPositiveDuration
		return p, nil
	}
	p.job.Checkpointable = p.job.Class == jobs.ClassBurst

	// The name's prefix and the GPU spec become a team and a template: no
	// control characters, as for any name Ballast keeps.
	for _, c := range []int{agName, agGPUSpec} {
		if msg := jobs.CheckText(string(col(c)), jobs.NoControls); msg != "" {
			return bad(c, errors.New(msg))
		}
	}
	if team, _, ok := bytes.Cut(col(agName), []byte("-")); ok && len(team) > 0 {
		p.job.Team = strs.get(team)
	} else {
		p.job.Team = "default"
	}
	spec := col(agGPUSpec)
	if isMissing(spec) {
		p.job.Template = "pod"
	} else {
		p.job.Template = strs.get(spec)
	}
	switch {
	case numGPU == 0: // a CPU pod
	case isMissing(spec):
		p.readings[3] = readModelAny
	default:
		// "V100M16|V100M32" is written the way a requirement lists the
		// values it accepts (jobs.AnyOf), so it is kept as it is.
		if p.job.Requires, err = models.get(spec); err != nil {
			return bad(agGPUSpec, err)
		}
		p.readings[3] = readModelOne
		if bytes.Contains(spec, []byte(jobs.AnyOf)) {
			p.readings[3] = readModelList
		}
	}
	return p, nil
}

// labelInterner gives the one-label Requires maps of an importer, one map
// per distinct value.
type labelInterner struct {
	key string
	m   requiresInterner // keyed by the value alone
}

// get returns {key: value}, or an error naming why value cannot be a
// label value.
func (in labelInterner) get(value []byte) (map[string]string, error) {
	if m, ok := in.m[string(value)]; ok {
		return m, nil
	}
	v := string(value)
	if msg := checkRequireValue(v); msg != "" {
		return nil, fmt.Errorf("%q cannot be the value of label %s: it %s", v, in.key, msg)
	}
	m := map[string]string{in.key: v}
	in.m[v] = m
	return m, nil
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
