package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/queues/checkpoints"
)

// overheadFlag is --checkpoint-overhead: a duration, or "measured"
// (the p90 of the checkpoint upload times the workers recorded in Redis)
// or "measured-median" (their median). A stopped job holds its slot while
// its last checkpoint uploads, so the measured upload time is what the
// simulator should charge per stop.
type overheadFlag struct {
	d time.Duration
	// measured is the quantile to take, 0 for a fixed duration.
	measured float64
}

// overheadQuantiles are the words --checkpoint-overhead takes for a
// measured value.
var overheadQuantiles = map[string]float64{"measured": 0.9, "measured-p90": 0.9, "measured-median": 0.5}

func (f *overheadFlag) String() string {
	for word, q := range overheadQuantiles {
		if q == f.measured && f.measured > 0 && word != "measured-p90" {
			return word
		}
	}
	return f.d.String()
}

func (f *overheadFlag) Set(s string) error {
	if q, ok := overheadQuantiles[strings.ToLower(strings.TrimSpace(s))]; ok {
		f.measured, f.d = q, 0
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("want a duration such as 30s, or measured (the p90 of the recorded checkpoint upload times) or measured-median")
	}
	f.d, f.measured = d, 0
	return nil
}

// minUploadSamples is how many recorded uploads a measured overhead needs
// before it is trusted over a warning.
const minUploadSamples = 20

// resolve gives the overhead to simulate: the flag's duration, or the
// quantile of the upload times recorded in the config's Redis, with a line
// on errOut saying what was measured.
func (f *overheadFlag) resolve(ctx context.Context, cfg config.Config, errOut io.Writer) (time.Duration, error) {
	if f.measured == 0 {
		return f.d, nil
	}
	store, closeFn, err := storeFor(ctx, cfg)
	if err != nil {
		return 0, fmt.Errorf("--checkpoint-overhead measured: %w", err)
	}
	defer closeFn()
	took, err := checkpoints.New(store).Uploads(ctx)
	if err != nil {
		return 0, fmt.Errorf("--checkpoint-overhead measured: %w", err)
	}
	if len(took) == 0 {
		return 0, fmt.Errorf("--checkpoint-overhead measured: no checkpoint upload is recorded in namespace %s (workers record one per commit when checkpoints.store is set); give a duration instead", cfg.Namespace)
	}
	d := quantile(took, f.measured)
	fmt.Fprintf(errOut, "checkpoint overhead %s: the %s of the %d newest checkpoint upload times (median %s, p90 %s, max %s)\n",
		d, map[float64]string{0.5: "median", 0.9: "p90"}[f.measured], len(took), quantile(took, 0.5), quantile(took, 0.9), slices.Max(took))
	if len(took) < minUploadSamples {
		fmt.Fprintf(errOut, "  only %d uploads recorded (the last %d are kept): a rough figure\n", len(took), checkpoints.UploadsKept)
	}
	return d, nil
}

// quantile is the nearest-rank q-quantile of ds (not empty).
func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}
