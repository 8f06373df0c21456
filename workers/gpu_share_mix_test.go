package workers_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// TestMixedSharesNeverOverfillAGPU runs a random mix of quarter, half,
// three-quarter and whole-GPU jobs on a worker of two stand-in GPUs. Each
// job writes the GPU it was bound to and when it ran; at no moment may
// the jobs on one GPU hold more than the whole of it, and every job ends.
func TestMixedSharesNeverOverfillAGPU(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := e.options()
	o.Slots = 0
	o.GPUs = fakeGPUs(t, 2)
	e.start(o)
	rng := rand.New(rand.NewPCG(5, 8))
	shares := []float64{0.25, 0.5, 0.75, 0}
	milli := map[string]int{}
	var ids []string
	for range 24 {
		share := shares[rng.IntN(len(shares))]
		s := e.shell(fmt.Sprintf(`s=$(date +%%s%%N); sleep 0.%d; echo "$BALLAST_JOB_ID $CUDA_VISIBLE_DEVICES $s $(date +%%s%%N)" >> "$BALLAST_PARAM_DIR/marks"`, 1+rng.IntN(3)))
		s.GPUShare = share
		j := e.submit(s, queues.QueueCore)
		ids = append(ids, j.ID)
		milli[j.ID] = 1000
		if share > 0 {
			milli[j.ID] = int(share * 1000)
		}
	}
	for _, id := range ids {
		if got := e.waitTerminal(id, 30*time.Second); got.State != jobs.StateSucceeded {
			t.Fatalf("%s: state %s error %q", id, got.State, got.LastError)
		}
	}
	type edge struct {
		at    int64
		delta int
		job   string
	}
	byGPU := map[string][]edge{}
	lines := strings.Split(strings.TrimSpace(e.read("marks")), "\n")
	if len(lines) != len(ids) {
		t.Fatalf("%d marks for %d jobs", len(lines), len(ids))
	}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 4 || strings.Contains(f[1], ",") {
			t.Fatalf("mark %q: want job, one GPU, start, end", l)
		}
		s, _ := strconv.ParseInt(f[2], 10, 64)
		en, _ := strconv.ParseInt(f[3], 10, 64)
		byGPU[f[1]] = append(byGPU[f[1]], edge{s, milli[f[0]], f[0]}, edge{en, -milli[f[0]], f[0]})
	}
	for g, es := range byGPU {
		// Ends before starts at one instant: a GPU freed and taken again
		// in a nanosecond is not overfilled.
		sort.Slice(es, func(i, k int) bool {
			if es[i].at != es[k].at {
				return es[i].at < es[k].at
			}
			return es[i].delta < es[k].delta
		})
		use, peak := 0, 0
		for _, x := range es {
			use += x.delta
			if use > 1000 {
				t.Fatalf("GPU %s held %d thousandths when %s started", g, use, x.job)
			}
			peak = max(peak, use)
		}
		t.Logf("GPU %s: %d jobs, peak %d thousandths", g, len(es)/2, peak)
	}
}
