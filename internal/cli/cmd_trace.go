package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"

	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// runTrace converts any trace source to Ballast's CSV: a synthetic month, a
// public trace imported, or the job records in Redis.
func runTrace(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "trace", "trace (--synthetic N [--seed S] | --alibaba-gpu FILE | --alibaba-spot FILE | --pai FILE | --history DURATION | --trace FILE) [--out FILE]")
	cfgPath := configFlag(fs)
	src := addTraceFlags(fs)
	outPath := fs.String("out", "-", "where to write the CSV (- is stdout)")
	if err := parse(fs, args); err != nil {
		return err
	}
	tr, err := src.load(ctx, *cfgPath, e.errOut)
	if err != nil {
		return err
	}
	w := e.out
	if *outPath != "-" {
		f, err := os.Create(*outPath)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := trace.WriteCSV(bw, tr); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(e.errOut, "%d jobs over %.1f days\n", len(tr.Jobs), tr.Span().Hours()/24)
	return nil
}
