package cost

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTableViews(t *testing.T) {
	r := mustCompute(t, mixedLedger())
	for _, c := range []struct {
		by    string
		head  string
		names []string
		// cell is a row name and a value it must show, from the hand
		// calculation in TestMixedBillingByHand: hourly used 418 of 720
		// slot-min; alpha cost 2 + 3×240/3600 + 2×296/60 = 12.066…; etl
		// cost 2 + 3×60/3600 + 1.5×3691/3600 + 2 = 5.587…; paid in all
		// 8 + 3×422/3600 + 1.575 + 24 = 33.926…; b3 ran 3 attempts.
		cell [2]string
	}{
		{"pool", "POOL", []string{"fixed", "hourly", "od", "spot", "TOTAL"}, [2]string{"hourly", "58.1%"}},
		{"team", "TEAM", []string{"alpha", "beta", "TOTAL"}, [2]string{"alpha", "12.07"}},
		{"template", "TEMPLATE", []string{"etl", "train", "TOTAL"}, [2]string{"etl", "5.59"}},
		{"day", "DAY", []string{"2025-03-10", "TOTAL"}, [2]string{"TOTAL", "33.93"}},
		{"job", "JOB", []string{"a1", "a2", "a3", "a4", "a5", "b1", "b2", "b3", "b4", "TOTAL"}, [2]string{"b3", "3"}},
	} {
		t.Run(c.by, func(t *testing.T) {
			var b strings.Builder
			if err := r.Table(&b, c.by); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			if len(lines) != 1+len(c.names) {
				t.Fatalf("%d lines, want header and %d rows:\n%s", len(lines), len(c.names), b.String())
			}
			if f := strings.Fields(lines[0]); f[0] != c.head {
				t.Errorf("header %q, want it to start with %s", lines[0], c.head)
			}
			for i, n := range c.names {
				if f := strings.Fields(lines[i+1]); f[0] != n {
					t.Errorf("row %d is %q, want %s", i, lines[i+1], n)
				}
				// Numbers are right-aligned to the last column, so every
				// line ends at the same place.
				if utf8.RuneCountInString(lines[i+1]) != utf8.RuneCountInString(lines[0]) {
					t.Errorf("row %q is not as wide as the header %q", lines[i+1], lines[0])
				}
			}
			found := false
			for _, line := range lines[1:] {
				f := strings.Fields(line)
				for _, cell := range f[1:] {
					found = found || f[0] == c.cell[0] && cell == c.cell[1]
				}
			}
			if !found {
				t.Errorf("no row %s shows %s:\n%s", c.cell[0], c.cell[1], b.String())
			}
		})
	}
}

type failingWriter struct{}

var errFull = errors.New("disk full")

func (failingWriter) Write([]byte) (int, error) { return 0, errFull }

func TestTableErrors(t *testing.T) {
	r := mustCompute(t, mixedLedger())
	if err := r.Table(&strings.Builder{}, "region"); err == nil || !strings.Contains(err.Error(), `"region"`) {
		t.Errorf("unknown view: error %v, want it named", err)
	}
	if err := r.Table(failingWriter{}, "pool"); !errors.Is(err, errFull) {
		t.Errorf("failing writer: error %v, want %v", err, errFull)
	}
}
