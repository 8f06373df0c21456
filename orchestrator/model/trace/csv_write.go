package trace

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// WriteCSV writes t in the CSV format described in the package
// documentation; ReadCSV gives back the same jobs, to the nanosecond, and
// the same start instant (an empty Requires map reads back as nil). The
// jobs are checked first and nothing is written when one breaks the Job
// contract or would make a line longer than MaxLineBytes, so a bad trace
// cannot leave a file that ReadCSV rejects halfway.
//
// The optional columns are written only as far as some job needs them
// (replicas and requires for gangs and labels, then share, then cpus and
// memory_bytes, then grace_s), so a trace without them is written as before and older
// readers still take it.
func WriteCSV(w io.Writer, t Trace) error {
	// The optional columns written: none, or from replicas up to the last
	// one some job needs, so older readers take what they can.
	last := colDeadline
	buf := make([]byte, 0, 256)
	for i, j := range t.Jobs {
		if err := j.validate(); err != nil {
			return fmt.Errorf("trace %q: job %d: %w", t.Name, i, err)
		}
		for _, s := range [2]string{j.Team, j.Template} {
			if strings.ContainsAny(s, "\r\n") {
				return fmt.Errorf("trace %q: job %d: %q has a line break, which the format cannot hold", t.Name, i, s)
			}
		}
		switch {
		case j.Grace > 0:
			last = colGrace
		case j.CPUs > 0 || j.Memory > 0:
			last = max(last, colMemory)
		case j.Share > 0:
			last = max(last, colShare)
		case j.Replicas != 0 || len(j.Requires) > 0:
			last = max(last, colRequires)
		}
	}
	for i, j := range t.Jobs {
		// The numbers take at most 220 bytes: only long names can make a
		// line too long, and only then is the line laid out to measure it.
		if 2*(len(j.Team)+len(j.Template)+requiresLen(j.Requires))+220 > MaxLineBytes {
			if buf = appendCSVJob(buf[:0], j, last); len(buf)-1 > MaxLineBytes {
				return fmt.Errorf("trace %q: job %d: its line would be %d bytes, more than the %d ReadCSV takes", t.Name, i, len(buf)-1, MaxLineBytes)
			}
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if !t.Start.IsZero() {
		bw.WriteString(startComment + " " + formatStart(t.Start) + "\n")
	}
	bw.WriteString(strings.Join(csvColumns[:last+1], ",") + "\n")
	for _, j := range t.Jobs {
		buf = appendCSVJob(buf[:0], j, last)
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// formatStart writes the start instant with its offset, then the zone name
// when it is one time.LoadLocation can find again: "Local" means a different
// zone on the reading machine, so it is left at the offset.
//
// RFC 3339 offsets are whole minutes; a zone's local mean time before
// standard time (Europe/Berlin's +00:53:28 in the year 1800) is not, and
// would move the start by its seconds. Such an instant is written in UTC:
// the zone name after it still gives the reader the local time.
func formatStart(start time.Time) string {
	s := start.Format(time.RFC3339Nano)
	if _, off := start.Zone(); off%60 != 0 {
		s = start.UTC().Format(time.RFC3339Nano)
	}
	if loc := start.Location(); loc != time.UTC && loc != time.Local && loc.String() != "" {
		if _, err := time.LoadLocation(loc.String()); err == nil {
			s += " " + loc.String()
		}
	}
	return s
}

// appendCSVJob lays out one line with the optional columns up to last.
func appendCSVJob(buf []byte, j Job, last int) []byte {
	buf = appendSeconds(buf, j.Submit)
	buf = append(buf, ',')
	buf = appendSeconds(buf, j.Duration)
	buf = append(buf, ',')
	buf = strconv.AppendInt(buf, int64(j.Slots), 10)
	buf = append(buf, ',')
	buf = append(buf, j.Class...)
	buf = append(buf, ',')
	buf = appendField(buf, j.Team)
	buf = append(buf, ',')
	buf = appendField(buf, j.Template)
	if j.Checkpointable {
		buf = append(buf, ",true,"...)
	} else {
		buf = append(buf, ",false,"...)
	}
	if j.Deadline > 0 {
		buf = appendSeconds(buf, j.Deadline)
	}
	if last >= colRequires {
		buf = append(buf, ',')
		if j.Replicas != 0 {
			buf = strconv.AppendInt(buf, int64(j.Replicas), 10)
		}
		buf = append(buf, ',')
		buf = appendField(buf, formatRequires(j.Requires))
	}
	if last >= colShare {
		buf = append(buf, ',')
		if j.Share > 0 {
			buf = strconv.AppendInt(buf, int64(j.Share), 10)
		}
	}
	if last >= colMemory {
		buf = append(buf, ',')
		if j.CPUs > 0 {
			buf = strconv.AppendFloat(buf, j.CPUs, 'g', -1, 64)
		}
		buf = append(buf, ',')
		if j.Memory > 0 {
			buf = strconv.AppendInt(buf, j.Memory, 10)
		}
	}
	if last >= colGrace {
		buf = append(buf, ',')
		if j.Grace > 0 {
			buf = appendSeconds(buf, j.Grace)
		}
	}
	return append(buf, '\n')
}

// formatRequires writes labels as "k=v;k2=v2", keys sorted so the same
// labels are always the same text.
func formatRequires(req map[string]string) string {
	if len(req) == 0 {
		return ""
	}
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(req)) {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(req[k])
	}
	return b.String()
}

// requiresLen is the length of formatRequires(req).
func requiresLen(req map[string]string) int {
	n := 0
	for k, v := range req {
		n += len(k) + len(v) + 2
	}
	return n
}

// appendField quotes a string only when it holds a comma or a quote, so
// ordinary names stay readable.
func appendField(buf []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"") {
		return append(buf, s...)
	}
	buf = append(buf, '"')
	buf = append(buf, bytes.ReplaceAll([]byte(s), []byte(`"`), []byte(`""`))...)
	return append(buf, '"')
}
