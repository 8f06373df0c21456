package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// outputFlag registers -o (table or json).
func outputFlag(fs *flag.FlagSet) *string {
	return fs.String("o", "table", "output format: table or json")
}

// parseArgs parses fs, checks -o and that exactly n positional arguments
// were given; usage says what to give instead.
func parseArgs(fs *flag.FlagSet, args []string, out *string, n int, usage string) error {
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	if fs.NArg() != n {
		return usageError{usage}
	}
	return nil
}

func checkOutput(o string) error {
	if o != "table" && o != "json" {
		return usageError{fmt.Sprintf("-o %q: use table or json", o)}
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// table writes aligned columns.
func table(w io.Writer, header string, rows [][]any) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		for i, c := range r {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, c)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// ago renders a time relative to now for tables.
func ago(t time.Time, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t).Round(time.Second)
	if d < 0 {
		return "in " + (-d).String()
	}
	return d.String() + " ago"
}
