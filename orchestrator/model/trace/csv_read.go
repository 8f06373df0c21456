package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // a start comment's zone must load on a minimal image too

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// csvColumns is the header of the trace CSV format, in order: the eight
// columns every file has, then the optional ones.
var csvColumns = []string{"submit_s", "duration_s", "slots", "class", "team", "template", "checkpointable", "deadline_s",
	"replicas", "requires", "share", "cpus", "memory_bytes", "grace_s"}

const csvHeader = "submit_s,duration_s,slots,class,team,template,checkpointable,deadline_s"

// Column positions in csvColumns.
const (
	colSubmit = iota
	colDuration
	colSlots
	colClass
	colTeam
	colTemplate
	colCheckpointable
	colDeadline
	colReplicas // optional, like every column after it
	colRequires
	colShare
	colCPUs
	colMemory
	colGrace
	numColumns  = colReplicas // the columns every file has
	numOptional = colGrace + 1 - numColumns
)

// csvLayout is where a file has the optional columns: at[c-numColumns] is
// the field index of optional column c, -1 when absent.
type csvLayout struct {
	header string
	width  int
	at     [numOptional]int
}

func (l csvLayout) col(c int) int { return l.at[c-numColumns] }

// layoutOf reads a header: the base columns, then any of the optional
// ones, each at most once and in csvColumns' order.
func layoutOf(header string) (csvLayout, bool) {
	rest, ok := strings.CutPrefix(header, csvHeader)
	l := csvLayout{header: header, width: numColumns}
	for i := range l.at {
		l.at[i] = -1
	}
	if !ok {
		return l, false
	}
	next := numColumns
	for rest != "" {
		var name string
		if rest, ok = strings.CutPrefix(rest, ","); !ok {
			return l, false
		}
		name, rest, _ = strings.Cut(rest, ",")
		if rest != "" {
			rest = "," + rest
		}
		for next < len(csvColumns) && csvColumns[next] != name {
			next++
		}
		if next == len(csvColumns) {
			return l, false
		}
		l.at[next-numColumns] = l.width
		l.width++
		next++
	}
	return l, true
}

// startComment starts the optional comment line that carries Trace.Start.
const startComment = "# start:"

// ReadCSV reads a trace in the CSV format described in the package
// documentation. It streams: memory is the Jobs slice plus one copy of each
// distinct team and template, whatever the file size. Jobs out of order are
// sorted by submit time, keeping file order for equal times.
//
// Every error is a *ParseError naming the line and, when one cell is at
// fault, its column.
func ReadCSV(r io.Reader, name string) (Trace, error) {
	t := Trace{Name: name}
	lr := newLineReader(r)
	grow := jobsGrower{total: sizeOf(r)}

	layout, err := readCSVPreamble(lr, &t)
	if err != nil {
		return Trace{}, err
	}
	strs := make(interner)
	reqs := make(requiresInterner)
	sorted := true
	for {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Trace{}, err
		}
		if line[0] == '#' {
			continue
		}
		if len(t.Jobs) == MaxJobs {
			return Trace{}, &ParseError{Line: lr.line, Err: fmt.Errorf("more than %d jobs", MaxJobs)}
		}
		fields, err := lr.split(line)
		if err != nil {
			return Trace{}, err
		}
		j, perr := parseCSVJob(fields, layout, strs, reqs)
		if perr != nil {
			perr.Line = lr.line
			return Trace{}, perr
		}
		if n := len(t.Jobs); n > 0 && j.Submit < t.Jobs[n-1].Submit {
			sorted = false
		}
		t.Jobs = append(grow.reserve(t.Jobs, lr.consumed), j)
	}
	if !sorted {
		SortJobs(t.Jobs)
	}
	return t, nil
}

// readCSVPreamble reads the comment lines before the header (taking the
// start time from one of them) and checks the header, which tells where
// the optional columns are.
func readCSVPreamble(lr *lineReader, t *Trace) (csvLayout, error) {
	for {
		line, err := lr.next()
		if err == io.EOF {
			return csvLayout{}, &ParseError{Line: lr.line + 1, Err: fmt.Errorf("no header: want %q", csvHeader)}
		}
		if err != nil {
			return csvLayout{}, err
		}
		if line[0] == '#' {
			if rest, ok := bytes.CutPrefix(line, []byte(startComment)); ok {
				start, err := parseStart(strings.TrimSpace(string(rest)))
				if err != nil {
					return csvLayout{}, &ParseError{Line: lr.line, Column: "start", Err: err}
				}
				t.Start = start
			}
			continue
		}
		layout, ok := layoutOf(string(line))
		if !ok {
			return csvLayout{}, &ParseError{Line: lr.line, Err: fmt.Errorf("header is %q, want %q, optionally followed by any of %s in that order",
				line, csvHeader, strings.Join(csvColumns[numColumns:], ", "))}
		}
		return layout, nil
	}
}

// parseStart reads "RFC3339 [zone]", the value of the start comment. The
// zone name is kept apart from the offset because per-day reports need the
// zone's daylight-saving rules, which an offset alone does not carry.
func parseStart(s string) (time.Time, error) {
	stamp, zone, _ := strings.Cut(s, " ")
	start, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time", stamp)
	}
	if zone = strings.TrimSpace(zone); zone != "" {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			return time.Time{}, fmt.Errorf("unknown time zone %q", zone)
		}
		start = start.In(loc)
	}
	// RFC 3339 has four-digit years: a start that is in range only in its
	// own offset (year 0000 at +00:01) could not be written back.
	for _, y := range []int{start.Year(), start.UTC().Year()} {
		if y < 1 || y > 9999 {
			return time.Time{}, fmt.Errorf("%q is outside the years 0001 to 9999", stamp)
		}
	}
	return start, nil
}

// parseCSVJob converts the fields of one data line. The error's Line is
// left for the caller to fill in.
func parseCSVJob(f [][]byte, layout csvLayout, strs interner, reqs requiresInterner) (Job, *ParseError) {
	if len(f) != layout.width {
		return Job{}, &ParseError{Err: fmt.Errorf("has %d fields, want %d (%s)", len(f), layout.width, layout.header)}
	}
	bad := func(col int, err error) (Job, *ParseError) {
		return Job{}, &ParseError{Column: csvColumns[col], Err: err}
	}
	var j Job
	var err error
	if j.Submit, err = parseSeconds(f[colSubmit]); err != nil {
		return bad(colSubmit, err)
	}
	if j.Submit < 0 {
		return bad(colSubmit, errors.New("must be >= 0"))
	}
	if j.Duration, err = parseSeconds(f[colDuration]); err != nil {
		return bad(colDuration, err)
	}
	if j.Duration <= 0 {
		return bad(colDuration, errors.New("must be > 0"))
	}
	if j.Slots, err = parseCount(f[colSlots], MaxSlots); err != nil {
		return bad(colSlots, err)
	}
	if j.Slots < 1 {
		return bad(colSlots, errors.New("must be >= 1"))
	}
	switch string(f[colClass]) {
	case string(jobs.ClassCore):
		j.Class = jobs.ClassCore
	case string(jobs.ClassBurst):
		j.Class = jobs.ClassBurst
	default:
		return bad(colClass, fmt.Errorf("%q is not core or burst", f[colClass]))
	}
	// Names: no control characters, as for any name Ballast keeps (a
	// carriage return alone could not be written back).
	for _, c := range []int{colTeam, colTemplate} {
		if msg := jobs.CheckText(string(f[c]), jobs.NoControls); msg != "" {
			return bad(c, errors.New(msg))
		}
	}
	j.Team = strs.get(f[colTeam])
	j.Template = strs.get(f[colTemplate])
	// Case is ignored because spreadsheets and pandas write True/FALSE.
	switch c := f[colCheckpointable]; {
	case bytes.EqualFold(c, []byte("true")):
		j.Checkpointable = true
	case bytes.EqualFold(c, []byte("false")):
	default:
		return bad(colCheckpointable, fmt.Errorf("%q is not true or false", c))
	}
	if len(f[colDeadline]) > 0 {
		if j.Deadline, err = parseSeconds(f[colDeadline]); err != nil {
			return bad(colDeadline, err)
		}
		if j.Deadline < 0 {
			return bad(colDeadline, errors.New("must be >= 0 (leave it empty for none)"))
		}
	}
	if c := layout.col(colReplicas); c >= 0 && len(f[c]) > 0 {
		if j.Replicas, err = parseCount(f[c], MaxSlots); err != nil {
			return bad(colReplicas, err)
		}
		if j.Slots > MaxSlots/j.Members() {
			return bad(colReplicas, fmt.Errorf("%d members of %d slots are more than %d slots", j.Replicas, j.Slots, MaxSlots))
		}
	}
	if c := layout.col(colRequires); c >= 0 && len(f[c]) > 0 {
		if j.Requires, err = reqs.get(f[c]); err != nil {
			return bad(colRequires, err)
		}
	}
	if c := layout.col(colShare); c >= 0 && len(f[c]) > 0 {
		if j.Share, err = parseCount(f[c], 999); err != nil {
			return bad(colShare, err)
		}
		if j.Share > 0 && (j.Slots != 1 || j.Members() != 1) {
			return bad(colShare, errors.New("a share of one GPU is for a job of one slot and one member"))
		}
	}
	if c := layout.col(colCPUs); c >= 0 && len(f[c]) > 0 {
		v, err := strconv.ParseFloat(string(f[c]), 64)
		if err != nil || !(v >= 0) || v > 1<<20 {
			return bad(colCPUs, errors.New("want the cores one member needs, a number >= 0"))
		}
		j.CPUs = v
	}
	if c := layout.col(colMemory); c >= 0 && len(f[c]) > 0 {
		v, err := strconv.ParseInt(string(f[c]), 10, 64)
		if err != nil || v < 0 {
			return bad(colMemory, errors.New("want the bytes one member needs, a whole number >= 0"))
		}
		j.Memory = v
	}
	if c := layout.col(colGrace); c >= 0 && len(f[c]) > 0 {
		if j.Grace, err = parseSeconds(f[c]); err != nil {
			return bad(colGrace, err)
		}
		if j.Grace < 0 || j.Grace > MaxOffset {
			return bad(colGrace, errors.New("want the seconds the job has to stop once told to, >= 0 (empty for none)"))
		}
	}
	return j, nil
}

// requiresInterner shares one map between the jobs whose requires cells
// are the same text, as interner does for strings: a million jobs of a
// handful of GPU models hold a handful of maps.
type requiresInterner map[string]map[string]string

// get parses a requires cell, "k=v;k2=v2", or returns the map already
// parsed from the same text.
func (in requiresInterner) get(cell []byte) (map[string]string, error) {
	if m, ok := in[string(cell)]; ok {
		return m, nil
	}
	m, err := parseRequires(string(cell))
	if err != nil {
		return nil, err
	}
	in[string(cell)] = m
	return m, nil
}

// parseRequires reads "k=v;k2=v2" into labels that Job.Requires allows.
// Each label is cut at its first '=', so a value may hold one; a key may
// appear once.
func parseRequires(cell string) (map[string]string, error) {
	m := make(map[string]string)
	for item := range strings.SplitSeq(cell, ";") {
		k, v, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not key=value", item)
		}
		if msg := checkRequireKey(k); msg != "" {
			return nil, fmt.Errorf("key %q %s", k, msg)
		}
		if msg := checkRequireValue(v); msg != "" {
			return nil, fmt.Errorf("%s: value %q %s", k, v, msg)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("key %q appears twice", k)
		}
		if len(m) == MaxRequires {
			return nil, fmt.Errorf("more than %d labels", MaxRequires)
		}
		m[k] = v
	}
	return m, nil
}
