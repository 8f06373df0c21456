package trace

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// WriteCSV writes t in the CSV format described in the package
// documentation; ReadCSV gives back the same jobs, to the nanosecond, and
// the same start instant. The jobs are checked first and nothing is written
// when one breaks the Job contract, so a bad trace cannot leave a file that
// ReadCSV rejects halfway.
func WriteCSV(w io.Writer, t Trace) error {
	for i, j := range t.Jobs {
		if err := j.validate(); err != nil {
			return fmt.Errorf("trace %q: job %d: %w", t.Name, i, err)
		}
		for _, s := range [2]string{j.Team, j.Template} {
			if strings.ContainsAny(s, "\r\n") {
				return fmt.Errorf("trace %q: job %d: %q has a line break, which the format cannot hold", t.Name, i, s)
			}
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if !t.Start.IsZero() {
		bw.WriteString(startComment + " " + formatStart(t.Start) + "\n")
	}
	bw.WriteString(csvHeader + "\n")
	buf := make([]byte, 0, 256)
	for _, j := range t.Jobs {
		buf = appendCSVJob(buf[:0], j)
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

func appendCSVJob(buf []byte, j Job) []byte {
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
	return append(buf, '\n')
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
