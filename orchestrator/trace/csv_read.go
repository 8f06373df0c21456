package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	_ "time/tzdata" // a start comment's zone must load on a minimal image too

	"github.com/ballastdev/ballast/jobs"
)

// csvColumns is the header of the trace CSV format, in order.
var csvColumns = []string{"submit_s", "duration_s", "slots", "class", "team", "template", "checkpointable", "deadline_s"}

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
	numColumns
)

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

	if err := readCSVPreamble(lr, &t); err != nil {
		return Trace{}, err
	}
	strs := make(interner)
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
		j, perr := parseCSVJob(fields, strs)
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
// start time from one of them) and checks the header.
func readCSVPreamble(lr *lineReader, t *Trace) error {
	for {
		line, err := lr.next()
		if err == io.EOF {
			return &ParseError{Line: lr.line + 1, Err: fmt.Errorf("no header: want %q", csvHeader)}
		}
		if err != nil {
			return err
		}
		if line[0] == '#' {
			if rest, ok := bytes.CutPrefix(line, []byte(startComment)); ok {
				start, err := parseStart(strings.TrimSpace(string(rest)))
				if err != nil {
					return &ParseError{Line: lr.line, Column: "start", Err: err}
				}
				t.Start = start
			}
			continue
		}
		if string(line) != csvHeader {
			return &ParseError{Line: lr.line, Err: fmt.Errorf("header is %q, want %q", line, csvHeader)}
		}
		return nil
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
func parseCSVJob(f [][]byte, strs interner) (Job, *ParseError) {
	if len(f) != numColumns {
		return Job{}, &ParseError{Err: fmt.Errorf("has %d fields, want %d (%s)", len(f), numColumns, csvHeader)}
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
	return j, nil
}
