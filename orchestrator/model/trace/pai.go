package trace

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// PAIOptions tunes ReadPAI2020.
type PAIOptions struct {
	// Name is the trace's name; "pai-2020" when empty.
	Name string
	// Start becomes Trace.Start. When zero it is the earliest kept
	// start_time read as Unix time in UTC+8: the dataset's README says its
	// times were shifted by a constant that keeps the time of day and the
	// weekday of Asia/Shanghai (whose offset has not changed since 1991),
	// while the date is fake. Per-hour and per-weekday reports are right.
	Start time.Time
	// CoreDayShare is the share of the trace's days on which a user must
	// submit to count as periodic (core); 0.5 when zero. See ReadPAI2020.
	CoreDayShare float64
}

// paiZone is the zone the PAI times keep the time of day of.
var paiZone = time.FixedZone("UTC+8", 8*60*60)

// paiColumns names the columns of pai_job_table.csv, which has no header of
// its own (the dataset ships it as pai_job_table.header).
var paiColumns = []string{"job_name", "inst_id", "user", "status", "start_time", "end_time"}

const paiHeader = "job_name,inst_id,user,status,start_time,end_time"

// ReadPAI2020 imports the job table of the Alibaba PAI GPU cluster trace
// 2020 (cluster-trace-gpu-v2020, pai_job_table.csv): no header, columns
// job_name, inst_id, user, status, start_time, end_time, times in seconds,
// empty or "\N" when missing. A first line equal to the published header is
// skipped, for files that had it prepended.
//
// Each job becomes a Job:
//   - Submit: start_time (the submission time, per the dataset) minus the
//     earliest kept start_time; Duration: end_time - start_time, so it
//     includes any wait inside PAI, which the job table does not separate.
//   - Team: user. Template: "pai" (the job table names no task kind).
//   - Slots: 1. GPU counts live in pai_task_table (plan_gpu per task), which
//     this importer does not join: the simulator needs arrivals and run
//     times, and a per-job GPU sum over tasks would be a second guess.
//   - Class: core when the user submits on a recurring daily rhythm, burst
//     otherwise. The heuristic: a user is periodic when the days (in UTC+8)
//     on which they submit a kept job number at least 2 and at least
//     CoreDayShare of the days the kept jobs span. Someone who runs work
//     every day or two is running a pipeline; someone seen on a few days
//     runs ad hoc jobs. The floor of 2 keeps a one-day trace from calling
//     everyone periodic.
//   - Checkpointable: burst jobs, as for ReadAlibabaGPU2023.
//
// Rows are skipped, counted under the first reason that applies, for:
// SkipStatus (status not Terminated, Failed or Running), SkipMissingTime,
// SkipNonPositiveDuration. A malformed row is an error, a *ParseError.
func ReadPAI2020(r io.Reader, o PAIOptions) (Trace, ImportStats, error) {
	share := o.CoreDayShare
	if share == 0 {
		share = 0.5
	}
	var stats ImportStats
	if share < 0 || share > 1 || math.IsNaN(share) {
		return Trace{}, stats, fmt.Errorf("pai: CoreDayShare %v is outside [0, 1]", o.CoreDayShare)
	}
	t := Trace{Name: o.Name, Start: o.Start}
	if t.Name == "" {
		t.Name = "pai-2020"
	}
	lr := newLineReader(r)
	strs := make(interner)
	minStart := time.Duration(-1)
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Trace{}, stats, err
		}
		if stats.Read == 0 && lr.line == 1 && string(line) == paiHeader {
			continue
		}
		if stats.Read == MaxJobs {
			return Trace{}, stats, &ParseError{Line: lr.line, Err: fmt.Errorf("more than %d rows", MaxJobs)}
		}
		stats.Read++
		fields, err := lr.split(line)
		if err != nil {
			return Trace{}, stats, err
		}
		if len(fields) != len(paiColumns) {
			return Trace{}, stats, &ParseError{Line: lr.line, Err: fmt.Errorf("has %d fields, want %d (%s)", len(fields), len(paiColumns), paiHeader)}
		}
		j, reason, perr := paiJob(fields, strs)
		if perr != nil {
			perr.Line = lr.line
			return Trace{}, stats, perr
		}
		if reason != "" {
			stats.skip(reason)
			continue
		}
		stats.Kept++
		if minStart < 0 || j.Submit < minStart {
			minStart = j.Submit
		}
		t.Jobs = append(t.Jobs, j)
	}
	if len(t.Jobs) == 0 {
		return t, stats, nil
	}
	classifyPAIUsers(t.Jobs, share)
	if t.Start.IsZero() {
		t.Start = time.Unix(0, int64(minStart)).In(paiZone)
	}
	for i := range t.Jobs {
		t.Jobs[i].Submit -= minStart
	}
	SortJobs(t.Jobs)
	return t, stats, nil
}

// paiJob converts one row, its Submit still the absolute start_time and its
// class not yet decided.
func paiJob(f [][]byte, strs interner) (Job, SkipReason, *ParseError) {
	switch string(f[3]) {
	case "Terminated", "Failed", "Running":
	default:
		return Job{}, SkipStatus, nil
	}
	var times [2]time.Duration
	for i, c := range [2]int{4, 5} {
		if isMissing(f[c]) {
			return Job{}, SkipMissingTime, nil
		}
		d, err := parseSeconds(f[c])
		if err != nil {
			return Job{}, "", &ParseError{Column: paiColumns[c], Err: err}
		}
		if d < 0 {
			return Job{}, "", &ParseError{Column: paiColumns[c], Err: errors.New("must be >= 0")}
		}
		times[i] = d
	}
	// The user becomes a team name: no control characters, as for any
	// name Ballast keeps (a line break could not even be written back).
	if msg := jobs.CheckText(string(f[2]), jobs.NoControls); msg != "" {
		return Job{}, "", &ParseError{Column: paiColumns[2], Err: errors.New(msg)}
	}
	j := Job{
		Submit:   times[0],
		Duration: times[1] - times[0],
		Slots:    1,
		Team:     strs.get(f[2]),
		Template: "pai",
	}
	if j.Duration <= 0 {
		return Job{}, SkipNonPositiveDuration, nil
	}
	return j, "", nil
}

// classifyPAIUsers sets Class and Checkpointable by the daily-rhythm rule of
// ReadPAI2020. Submits are still absolute, so days are Unix days in UTC+8.
func classifyPAIUsers(js []Job, share float64) {
	day := func(d time.Duration) int64 { return int64((d + 8*time.Hour) / (24 * time.Hour)) }
	first, last := day(js[0].Submit), day(js[0].Submit)
	for _, j := range js {
		first, last = min(first, day(j.Submit)), max(last, day(j.Submit))
	}
	span := int(last - first + 1)
	// One bit per day per user; users are few (about a thousand in PAI),
	// jobs many.
	words := (span + 63) / 64
	seen := make(map[string][]uint64)
	for _, j := range js {
		days := seen[j.Team]
		if days == nil {
			days = make([]uint64, words)
			seen[j.Team] = days
		}
		d := day(j.Submit) - first
		days[d/64] |= 1 << (d % 64)
	}
	need := max(2, int(math.Ceil(share*float64(span)-1e-9)))
	core := make(map[string]bool, len(seen))
	for user, days := range seen {
		n := 0
		for _, w := range days {
			n += bits.OnesCount64(w)
		}
		core[user] = n >= need
	}
	for i := range js {
		if core[js[i].Team] {
			js[i].Class = jobs.ClassCore
		} else {
			js[i].Class = jobs.ClassBurst
			js[i].Checkpointable = true
		}
	}
}
