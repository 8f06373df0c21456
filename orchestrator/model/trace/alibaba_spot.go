package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// AlibabaSpotOptions tunes ReadAlibabaSpot2026.
type AlibabaSpotOptions struct {
	// Name is the trace's name; "alibaba-spot-2026" when empty.
	Name string
	// Start becomes Trace.Start, the wall-clock time of the earliest kept
	// submission. The public trace publishes none, so it stays zero unless
	// set.
	Start time.Time
	// CountCPUJobs keeps jobs that ask for no GPU, as gangs of
	// ceil(cpu_request) slots per member (at least 1), for studying a CPU
	// pool.
	CountCPUJobs bool
	// SpotRestarts makes no job checkpointable: a spot job that loses its
	// GPUs then starts over. By default spot jobs are checkpointable.
	SpotRestarts bool
}

// alibabaSpotColumns are the columns of job_info_df.csv, all of which
// ReadAlibabaSpot2026 needs. Others (a pandas index) may be present and
// are ignored.
var alibabaSpotColumns = []string{"job_name", "organization", "gpu_model", "cpu_request", "gpu_request", "worker_num", "submit_time", "duration", "job_type"}

const (
	asName = iota
	asOrganization
	asGPUModel
	asCPURequest
	asGPURequest
	asWorkerNum
	asSubmit
	asDuration
	asJobType
)

// How ReadAlibabaSpot2026 read a kept job's fields, as ImportStats.Readings
// counts them.
const (
	readSpotWholeGPUs      = "GPUs: whole"
	readSpotFractionalGPUs = "GPUs: fractional gpu_request, rounded up to whole slots"
	readSpotCPUJob         = "CPU job: ceil(cpu_request) slots"
	readSpotModel          = "gpu_model: required"
	readSpotNoModel        = "gpu_model: empty, none required"
)

// More reasons ReadAlibabaSpot2026 skips a row for.
const (
	// SkipNoWorkers is a job whose worker_num is 0 or missing: it asks for
	// no instance to run on.
	SkipNoWorkers SkipReason = "no workers"
	// SkipUnknownJobType is a job whose job_type is neither HP nor Spot.
	SkipUnknownJobType SkipReason = "unknown job_type"
)

// ReadAlibabaSpot2026 imports the job table of Alibaba's trace of AI jobs
// on spot GPUs, 2026 (cluster-trace-v2026-spot-gpu, job_info_df.csv),
// whose header names job_name, organization, gpu_model, cpu_request (in
// vCPUs), gpu_request, worker_num, submit_time (seconds from the first
// submission) and duration (seconds), in any order; other columns, such as
// the nameless index pandas writes, are ignored. A header that lacks one
// of them is an error naming the missing columns.
//
// Every job that asks for GPUs on at least one worker for a known,
// positive time becomes a Job:
//   - Replicas: worker_num, the instances of the job, which start and run
//     together: a gang when more than 1.
//   - Slots: gpu_request, the GPUs of each instance. A fractional request
//     is rounded up to whole slots, as a worker binds whole GPUs; the
//     stats give the GPU-hours both ways (SlotHours, ShareHours) when one
//     is read.
//   - Requires: gpu_model, the GPU model the job asked for, as the
//     gpu_model label (GPUModelLabel); none when it is empty or "nan".
//   - Submit: submit_time minus the earliest kept submit_time; Duration:
//     duration. Both may be decimal.
//   - Class: job_type HP (high priority, with strict SLOs) is core; Spot
//     (run on spot instances as opportunistic capacity) is burst. Letter
//     case is ignored.
//   - Team: the organization, made a Ballast team name: lower-case, each
//     run of characters other than letters, digits, '.', '_' and '-'
//     made one '-', leading '.', '_' and '-' dropped, at most 63 bytes;
//     "default" when nothing is left. The public trace numbers its
//     organizations ("13"), which stay as they are.
//   - Template: gpu_model, or "job" when it is empty.
//   - Checkpointable: spot jobs, unless SpotRestarts: work written for
//     spot capacity is the kind that resumes after losing it, as burst
//     work is in the other importers.
//
// Rows are skipped, and counted under the first reason that applies, for:
// SkipNoGPU (gpu_request 0, a CPU-only job, unless CountCPUJobs keeps it as
// ceil(cpu_request) slots per worker, requiring no GPU model),
// SkipNoWorkers (worker_num 0 or missing), SkipMissingTime (no submit_time
// or no duration), SkipNonPositiveDuration (duration <= 0) and
// SkipUnknownJobType (job_type neither HP nor Spot: the format names only
// those two, and a third kind has no class to replay as). The stats count
// the slot-hours kept and skipped, the gangs and the labelled jobs, and
// each kept job's readings of the GPUs and the model. A malformed row (a
// wrong field count, a number that is not one, a negative submit_time, a
// gpu_model that cannot be a label value: control characters, ';', more
// than MaxRequireValueBytes) is a *ParseError: it means the
// file is not this format.
func ReadAlibabaSpot2026(r io.Reader, o AlibabaSpotOptions) (Trace, ImportStats, error) {
	t := Trace{Name: o.Name, Start: o.Start}
	if t.Name == "" {
		t.Name = "alibaba-spot-2026"
	}
	var stats ImportStats
	lr := newLineReader(r)

	header, err := lr.next()
	if err == io.EOF {
		return Trace{}, stats, &ParseError{Line: 1, Err: errors.New("empty input, want a job_info_df header")}
	}
	if err != nil {
		return Trace{}, stats, err
	}
	fields, err := lr.split(header)
	if err != nil {
		return Trace{}, stats, err
	}
	width := len(fields)
	idx, err := columnIndex(fields, alibabaSpotColumns)
	if err != nil {
		return Trace{}, stats, &ParseError{Line: lr.line, Err: err}
	}

	rd := spotReader{o: o, idx: idx, teams: make(map[string]string),
		models: labelInterner{key: GPUModelLabel, m: make(requiresInterner)}}
	minSubmit := time.Duration(-1)
	fractional := false
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
		sj, perr := rd.job(fields)
		if perr != nil {
			perr.Line = lr.line
			return Trace{}, stats, perr
		}
		if sj.skip != "" {
			stats.skipHeld(sj.skip, sj.spanHours)
			continue
		}
		stats.keep(sj.job)
		stats.ShareHours += sj.share * sj.job.Duration.Hours()
		for _, how := range sj.readings {
			stats.read(how)
		}
		fractional = fractional || sj.readings[0] == readSpotFractionalGPUs
		if minSubmit < 0 || sj.job.Submit < minSubmit {
			minSubmit = sj.job.Submit
		}
		t.Jobs = append(t.Jobs, sj.job)
	}
	if !fractional {
		stats.ShareHours = 0 // whole GPUs only: no shares to report
	}
	for i := range t.Jobs {
		t.Jobs[i].Submit -= minSubmit
	}
	SortJobs(t.Jobs)
	return t, stats, nil
}

// spotReader reads the rows of one file, sharing the strings and maps of
// its jobs.
type spotReader struct {
	o      AlibabaSpotOptions
	idx    []int
	teams  map[string]string // organization as written -> team name
	models labelInterner
}

// spotJob is one row read: a job (its Submit still the absolute
// submit_time) or the reason it is skipped.
type spotJob struct {
	job Job
	// share is the GPUs it asked for, all workers, fractions as such.
	share     float64
	readings  [2]string // GPUs, model
	skip      SkipReason
	spanHours float64 // slots x members x duration of a skipped row with one
}

// job reads one row. The *ParseError has no line number.
func (rd spotReader) job(f [][]byte) (spotJob, *ParseError) {
	col := func(c int) []byte { return f[rd.idx[c]] }
	bad := func(c int, err error) (spotJob, *ParseError) {
		return spotJob{}, &ParseError{Column: alibabaSpotColumns[c], Err: err}
	}
	var sj spotJob
	gpus, err := parseAmount(orZero(col(asGPURequest)))
	if err != nil {
		return bad(asGPURequest, err)
	}
	workers, err := parseCount(orZero(col(asWorkerNum)), MaxSlots)
	if err != nil {
		return bad(asWorkerNum, err)
	}
	switch {
	case gpus > 0:
		sj.job.Slots = int(math.Ceil(gpus))
		sj.share = gpus * float64(workers)
		if float64(sj.job.Slots) == gpus {
			sj.readings[0] = readSpotWholeGPUs
		} else {
			sj.readings[0] = readSpotFractionalGPUs
		}
	case !rd.o.CountCPUJobs:
		sj.skip = SkipNoGPU
	default:
		cpus, err := parseAmount(orZero(col(asCPURequest)))
		if err != nil {
			return bad(asCPURequest, err)
		}
		sj.job.Slots = max(1, int(math.Ceil(cpus)))
		sj.share = float64(sj.job.Slots * workers)
		sj.readings[0] = readSpotCPUJob
	}
	if sj.job.Slots > MaxSlots/max(1, workers) {
		return bad(asWorkerNum, fmt.Errorf("%d workers of %d slots are more than %d slots", workers, sj.job.Slots, MaxSlots))
	}
	sj.job.Replicas = workers

	// Times: absent when missing. A submission before the first one is
	// not this format; a duration of 0 or less is a row to skip.
	var times [2]time.Duration
	var has [2]bool
	for i, c := range [2]int{asSubmit, asDuration} {
		v := col(c)
		if isMissing(v) {
			continue
		}
		if times[i], err = parseSeconds(v); err != nil {
			return bad(c, err)
		}
		has[i] = true
	}
	if times[0] < 0 {
		return bad(asSubmit, errors.New("must be >= 0 (seconds from the first submission)"))
	}
	switch {
	case sj.skip != "":
		return sj, nil
	case workers == 0:
		sj.skip = SkipNoWorkers
		return sj, nil
	case !has[0] || !has[1]:
		sj.skip = SkipMissingTime
		return sj, nil
	case times[1] <= 0:
		sj.skip = SkipNonPositiveDuration
		return sj, nil
	}
	sj.job.Submit, sj.job.Duration = times[0], times[1]

	switch jt := col(asJobType); {
	case bytes.EqualFold(jt, []byte("HP")):
		sj.job.Class = jobs.ClassCore
	case bytes.EqualFold(jt, []byte("Spot")):
		sj.job.Class = jobs.ClassBurst
		sj.job.Checkpointable = !rd.o.SpotRestarts
	default:
		sj.skip = SkipUnknownJobType
		sj.spanHours = float64(sj.job.TotalSlots()) * sj.job.Duration.Hours()
		return sj, nil
	}

	// The organization is made a team name, whatever it holds; the model
	// must be a label value, as jobs that ask for it require it.
	sj.job.Team = rd.team(col(asOrganization))
	if model := col(asGPUModel); isMissing(model) {
		sj.job.Template = "job"
		sj.readings[1] = readSpotNoModel
	} else {
		req, err := rd.models.get(model)
		if err != nil {
			return bad(asGPUModel, err)
		}
		sj.job.Template = req[GPUModelLabel]
		if sj.readings[0] == readSpotCPUJob {
			sj.readings[1] = readSpotNoModel // a CPU job needs no GPU model
		} else {
			sj.job.Requires = req
			sj.readings[1] = readSpotModel
		}
	}
	return sj, nil
}

// team returns the team name of an organization, made once per distinct
// organization.
func (rd spotReader) team(org []byte) string {
	if t, ok := rd.teams[string(org)]; ok {
		return t
	}
	t := teamName(org)
	rd.teams[string(org)] = t
	return t
}

// teamName makes s a name that jobs accept as a team: lower-case letters,
// digits, '.', '_' and '-', starting with a letter or digit, at most 63
// bytes. Each run of other bytes (spaces, upper-case letters are lowered
// first, other UTF-8) becomes one '-'. Nothing left is "default"; a
// missing value too.
func teamName(s []byte) string {
	if isMissing(s) {
		return "default"
	}
	out := make([]byte, 0, min(len(s), 63))
	dash := false
	for _, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		ok := 'a' <= c && c <= 'z' || isDigit(c) || c == '.' || c == '_' || c == '-'
		switch {
		case !ok && dash:
			continue
		case !ok:
			c, dash = '-', true
		default:
			dash = false
		}
		if len(out) == 0 && (c == '.' || c == '_' || c == '-') {
			continue
		}
		if len(out) == 63 {
			break
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return "default"
	}
	return string(out)
}

// parseAmount reads a non-negative decimal amount of GPUs or CPUs ("8",
// "8.0", "0.5"), at most MaxSlots.
func parseAmount(b []byte) (float64, error) {
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(v) || v < 0 {
		return 0, fmt.Errorf("%q is not a non-negative number", b)
	}
	if v > MaxSlots {
		return 0, fmt.Errorf("%s is more than %d", b, MaxSlots)
	}
	return v, nil
}
