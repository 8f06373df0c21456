package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// traceSource is the flags that name where a trace comes from: exactly one
// of a Ballast CSV file, a public trace to import, a synthetic one, or the
// job records in Redis.
type traceSource struct {
	csv, alibaba, alibabaSpot, pai *string
	synthetic                      *int
	seed                           *uint64
	history                        *time.Duration
}

func addTraceFlags(fs *flag.FlagSet) *traceSource {
	return &traceSource{
		csv:     fs.String("trace", "", "a trace in Ballast's CSV format (see orchestrator/model/trace; - for stdin)"),
		alibaba: fs.String("alibaba-gpu", "", "import an Alibaba GPU cluster trace 2023 pod list (openb_pod_list*.csv)"),
		alibabaSpot: fs.String("alibaba-spot", "", "import an Alibaba spot-GPU trace 2026 job table (job_info_df.csv): "+
			"HP is core, Spot burst; worker_num gives gangs, gpu_model a required worker label"),
		pai:       fs.String("pai", "", "import an Alibaba PAI 2020 job table (pai_job_table.csv)"),
		synthetic: fs.Int("synthetic", 0, "generate a synthetic month of about N jobs with periodic, pulse and mixed rhythms"),
		seed:      fs.Uint64("seed", 1, "seed of the synthetic trace (and of the simulation's spot reclaims)"),
		history:   fs.Duration("history", 0, "use the job records in Redis from the last DURATION (e.g. 336h)"),
	}
}

// load reads the one trace the flags name. store opens Redis for --history.
func (t *traceSource) load(ctx context.Context, cfgPath string, errOut io.Writer) (trace.Trace, error) {
	n := 0
	for _, set := range []bool{*t.csv != "", *t.alibaba != "", *t.alibabaSpot != "", *t.pai != "", *t.synthetic > 0, *t.history > 0} {
		if set {
			n++
		}
	}
	if n != 1 {
		return trace.Trace{}, usageError{"name exactly one trace: --trace FILE, --alibaba-gpu FILE, --alibaba-spot FILE, --pai FILE, --synthetic N or --history DURATION"}
	}
	open := func(path string) (io.ReadCloser, error) {
		if path == "-" {
			return io.NopCloser(os.Stdin), nil
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("trace: %w", err)
		}
		return f, nil
	}
	switch {
	case *t.csv != "":
		f, err := open(*t.csv)
		if err != nil {
			return trace.Trace{}, err
		}
		defer f.Close()
		return trace.ReadCSV(f, *t.csv)
	case *t.alibaba != "":
		f, err := open(*t.alibaba)
		if err != nil {
			return trace.Trace{}, err
		}
		defer f.Close()
		tr, st, err := trace.ReadAlibabaGPU2023(f, trace.AlibabaGPUOptions{})
		printGPUImport(errOut, *t.alibaba, st)
		return tr, err
	case *t.alibabaSpot != "":
		f, err := open(*t.alibabaSpot)
		if err != nil {
			return trace.Trace{}, err
		}
		defer f.Close()
		tr, st, err := trace.ReadAlibabaSpot2026(f, trace.AlibabaSpotOptions{})
		printGPUImport(errOut, *t.alibabaSpot, st)
		return tr, err
	case *t.pai != "":
		f, err := open(*t.pai)
		if err != nil {
			return trace.Trace{}, err
		}
		defer f.Close()
		tr, st, err := trace.ReadPAI2020(f, trace.PAIOptions{})
		fmt.Fprintf(errOut, "imported %s: %s\n", *t.pai, st)
		return tr, err
	case *t.synthetic > 0:
		return trace.Generate(trace.DefaultSynthetic(*t.synthetic, *t.seed))
	}
	return historyTrace(ctx, cfgPath, *t.history)
}

// printGPUImport says what an import of a GPU trace kept and skipped. A
// slot of these traces is a GPU: the hours and readings let a user check
// the import against the raw file.
func printGPUImport(errOut io.Writer, path string, st trace.ImportStats) {
	fmt.Fprintf(errOut, "imported %s: %s\n", path, st)
	for _, d := range st.Details() {
		fmt.Fprintf(errOut, "  %s\n", strings.ReplaceAll(d, "slot-hours", "GPU-hours"))
	}
}

// historyTrace builds a trace from the finished jobs recorded in Redis over
// the last window: submitted at creation, running for start to finish.
func historyTrace(ctx context.Context, cfgPath string, window time.Duration) (trace.Trace, error) {
	store, closeFn, err := openStore(ctx, cfgPath)
	if err != nil {
		return trace.Trace{}, err
	}
	defer closeFn()
	until := time.Now()
	tr := trace.Trace{Name: "history-" + window.String(), Start: until.Add(-window).UTC()}
	err = store.History(ctx, until.Add(-window), until, func(j jobs.Job) error {
		if tj, ok := trace.JobOf(j, tr.Start); ok {
			tr.Jobs = append(tr.Jobs, tj)
		}
		return nil
	})
	if err != nil {
		return tr, err
	}
	if len(tr.Jobs) == 0 {
		return tr, fmt.Errorf("no finished job is recorded in the last %s (records are kept for the retention period)", window)
	}
	trace.SortJobs(tr.Jobs)
	return tr, nil
}
