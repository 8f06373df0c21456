package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// gpuMark is a core job of up to four GPUs that appends
// "JOB_ID CUDA_VISIBLE_DEVICES START_NANOS END_NANOS" to a shared file,
// sleeping in between: what it saw and when it held it.
func gpuMark() jobs.Template {
	return jobs.Template{
		Command: []string{"sh", "-c", `s=$(date +%s%N); sleep "$2"; echo "$BALLAST_JOB_ID $CUDA_VISIBLE_DEVICES $s $(date +%s%N)" >> "$1"`,
			"sh", "${record}", "${seconds}"},
		Class: jobs.ClassCore, Grace: jobs.Duration(hyGrace), MaxSlots: 4,
		Params: map[string]jobs.ParamSpec{
			"record":  {Type: jobs.ParamString, Required: true},
			"seconds": {Type: jobs.ParamFloat, Default: 0.0},
		},
	}
}

// gpuSpan is one line of the gpu-mark file, with the worker the record
// says ran it.
type gpuSpan struct {
	job, worker string
	devices     []string
	start, end  time.Time
}

func readGPUMarks(t *testing.T, path string) []gpuSpan {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []gpuSpan
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 4 {
			t.Fatalf("mark line %q: want job, devices, start, end", sc.Text())
		}
		s, _ := strconv.ParseInt(fs[2], 10, 64)
		e, _ := strconv.ParseInt(fs[3], 10, 64)
		out = append(out, gpuSpan{job: fs[0], devices: strings.Split(fs[1], ","), start: time.Unix(0, s), end: time.Unix(0, e)})
	}
	return out
}

// startGPUWorkers starts n `ballast worker --gpus auto` processes of the
// fixed pool, each finding four stand-in GPUs: there are no GPUs on the
// test machines, and the stand-in nvidia-smi first on their PATH prints
// what a four-A100 machine prints.
func (r *hybridRig) startGPUWorkers(n int) []string {
	r.t.Helper()
	env := []string{"PATH=" + testenv.FakeNvidiaSMI(r.t, 4) + ":" + os.Getenv("PATH")}
	var ids []string
	for i := range n {
		id := "gpu-" + strconv.Itoa(i+1)
		startChildEnv(r.t, r.bin, filepath.Join(r.dir, id+".log"), env,
			"worker", "--config", r.cfgPath, "--pool", "fixed", "--id", id, "--gpus", "auto")
		ids = append(ids, id)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		ready := 0
		ws := r.workers()
		for _, w := range ws {
			if len(w.GPUs) == 4 && w.Slots == 4 && w.Labels[queues.LabelGPUModel] == testenv.FakeGPUModel && w.PlaceQueue != "" {
				ready++
			}
		}
		if ready == n {
			return ids
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(r.dir, ids[0]+".log"))
			r.t.Fatalf("the GPU workers did not register with four GPUs each within 15s: registry %+v\n%s's log:\n%s", ws, ids[0], log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *hybridRig) submitGPUMark(key, record string, slots int, seconds float64) string {
	r.t.Helper()
	rec, _ := json.Marshal(record)
	return r.submit(jobs.Submission{Template: "gpu-mark", IdempotencyKey: key, Slots: &slots,
		Params: map[string]json.RawMessage{"record": rec, "seconds": json.RawMessage(strconv.FormatFloat(seconds, 'f', -1, 64))}})
}

func newGPURig(t *testing.T) *hybridRig {
	return newHybridRigWith(t, map[string]config.PoolConfig{
		"fixed": {Kind: config.PoolFixed, Slots: 8, PricePerSlotHour: 1},
	}, 1.0, 0.4, func(c *config.Config) { c.Templates["gpu-mark"] = gpuMark() })
}

// waitAllSucceeded waits for every job to succeed and returns the records.
func (r *hybridRig) waitAllSucceeded(ids []string, within time.Duration) map[string]jobs.Job {
	r.t.Helper()
	got := map[string]jobs.Job{}
	testenv.Eventually(r.t, within, "every job succeeded", func() bool {
		for _, id := range ids {
			j := r.job(id)
			r.mustNotFail(j)
			if j.State != jobs.StateSucceeded {
				return false
			}
			got[id] = j
		}
		return true
	})
	return got
}

// TestGPUJobsGetGPUsOfTheirOwn: two GPU workers of four stand-in GPUs run
// a mix of 1-, 2- and 4-GPU jobs. Every job saw as many GPUs as it asked
// for; no GPU of a worker was held by two jobs at once; no worker ran more
// than four slots at any moment.
func TestGPUJobsGetGPUsOfTheirOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	r := newGPURig(t)
	r.startGPUWorkers(2)
	r.startController("ctl-1", r.capacity(nil))

	record := filepath.Join(r.dir, "gpu.marks")
	sizes := []int{1, 2, 4, 1, 1, 2, 4, 1, 2, 1, 1, 4, 1, 2, 1}
	slotsOf := map[string]int{}
	var ids []string
	for i, k := range sizes {
		id := r.submitGPUMark("mix-"+strconv.Itoa(i), record, k, 0.6)
		slotsOf[id] = k
		ids = append(ids, id)
	}
	recs := r.waitAllSucceeded(ids, 60*time.Second)
	spans := readGPUMarks(t, record)
	if len(spans) != len(ids) {
		t.Fatalf("%d marks for %d jobs", len(spans), len(ids))
	}
	for i := range spans {
		sp := &spans[i]
		sp.worker = recs[sp.job].Worker
		if len(sp.devices) != slotsOf[sp.job] {
			t.Errorf("job %s of %d GPUs saw CUDA_VISIBLE_DEVICES %v", sp.job, slotsOf[sp.job], sp.devices)
		}
		seen := map[string]bool{}
		for _, d := range sp.devices {
			if seen[d] || !strings.HasPrefix(d, "GPU-") {
				t.Errorf("job %s saw devices %v: a repeat or not a UUID", sp.job, sp.devices)
			}
			seen[d] = true
		}
	}
	checkNoSharedGPU(t, spans, slotsOf, 4)
}

// checkNoSharedGPU fails when two overlapping spans on one worker share a
// GPU, or when a worker's slots in use ever exceed capacity.
func checkNoSharedGPU(t *testing.T, spans []gpuSpan, slotsOf map[string]int, capacity int) {
	t.Helper()
	for i, a := range spans {
		for _, b := range spans[i+1:] {
			if a.worker != b.worker || !a.start.Before(b.end) || !b.start.Before(a.end) {
				continue
			}
			for _, d := range a.devices {
				for _, e := range b.devices {
					if d == e {
						t.Errorf("jobs %s and %s both held %s on %s at once", a.job, b.job, d, a.worker)
					}
				}
			}
		}
	}
	type edge struct {
		at    time.Time
		delta int
	}
	by := map[string][]edge{}
	for _, s := range spans {
		by[s.worker] = append(by[s.worker], edge{s.start, slotsOf[s.job]}, edge{s.end, -slotsOf[s.job]})
	}
	for w, es := range by {
		// Ends before starts at the same instant: a slot freed and taken
		// again in one nanosecond is not two holders.
		sort.Slice(es, func(i, k int) bool {
			if !es[i].at.Equal(es[k].at) {
				return es[i].at.Before(es[k].at)
			}
			return es[i].delta < es[k].delta
		})
		use, peak := 0, 0
		for _, e := range es {
			use += e.delta
			peak = max(peak, use)
		}
		if peak > capacity {
			t.Errorf("worker %s ran %d slots at once; it has %d", w, peak, capacity)
		}
		t.Logf("worker %s: peak %d of %d slots", w, peak, capacity)
	}
}

// TestBigGPUJobIsNotStarvedByAStream: both workers are kept full by a
// stream of 1-GPU jobs; a 4-GPU job submitted into the stream reserves a
// worker and starts once the jobs running there end, not after the
// stream. The bound is one job's run (1 s), the time a held one-slot
// delivery takes to be handed on (2 s), two ticks and a heartbeat, with
// a second of margin: 5 s. The stream alone lasts 15 s.
func TestBigGPUJobIsNotStarvedByAStream(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	r := newGPURig(t)
	r.startGPUWorkers(2)
	r.startController("ctl-1", r.capacity(nil))
	record := filepath.Join(r.dir, "stream.marks")
	var ids []string
	slotsOf := map[string]int{}
	for i := range 120 {
		id := r.submitGPUMark("small-"+strconv.Itoa(i), record, 1, 1)
		ids, slotsOf[id] = append(ids, id), 1
	}
	testenv.Eventually(t, 15*time.Second, "both workers full of one-GPU jobs", func() bool {
		busy := 0
		for _, w := range r.workers() {
			busy += w.Busy
		}
		return busy == 8
	})
	submitted := time.Now()
	big := r.submitGPUMark("big", record, 4, 1)
	ids, slotsOf[big] = append(ids, big), 4
	var started time.Time
	testenv.Eventually(t, 30*time.Second, "the four-GPU job started", func() bool {
		j := r.job(big)
		r.mustNotFail(j)
		if j.State == jobs.StateRunning || j.State == jobs.StateSucceeded {
			started = j.StartedAt
			return true
		}
		return false
	})
	wait := started.Sub(submitted)
	t.Logf("the four-GPU job waited %s behind a stream of 120 one-GPU jobs on 8 GPUs", wait.Round(time.Millisecond))
	if bound := 5 * time.Second; wait > bound {
		t.Errorf("the four-GPU job waited %s, more than the %s bound", wait, bound)
	}
	recs := r.waitAllSucceeded(ids, 90*time.Second)
	spans := readGPUMarks(t, record)
	for i := range spans {
		spans[i].worker = recs[spans[i].job].Worker
	}
	checkNoSharedGPU(t, spans, slotsOf, 4)
}

// TestSizedCoreJobReclaimsBorrowedGPUs: two checkpointable 2-GPU burst jobs
// borrow the whole of a 4-GPU fixed worker. A 2-GPU core job then arrives:
// one borrowed job is checkpointed and sent back to burst, and the core
// job starts on the two GPUs it frees within a few ticks plus the victim's
// grace. Nothing else runs on the worker meanwhile, so it never holds
// more than four slots.
func TestSizedCoreJobReclaimsBorrowedGPUs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	r := newHybridRigWith(t, map[string]config.PoolConfig{
		"fixed": {Kind: config.PoolFixed, Slots: 4, PricePerSlotHour: 1},
	}, 1.0, 0.4, func(c *config.Config) {
		c.Templates["gpu-mark"] = gpuMark()
		steps := c.Templates["hy-steps"]
		steps.Slots = 2
		c.Templates["gpu-steps"] = steps
	})
	worker := r.startGPUWorkers(1)[0]
	r.startController("ctl-1", r.capacity(nil))

	var burst []string
	for _, key := range []string{"borrow-a", "borrow-b"} {
		rec, _ := json.Marshal(filepath.Join(r.dir, key+".record"))
		burst = append(burst, r.submit(jobs.Submission{Template: "gpu-steps", IdempotencyKey: key,
			Params: map[string]json.RawMessage{"steps": json.RawMessage("80"), "record": rec}}))
	}
	testenv.Eventually(t, 20*time.Second, "both 2-GPU burst jobs lent to the fixed worker and checkpointing", func() bool {
		for _, id := range burst {
			j := r.job(id)
			r.mustNotFail(j)
			if j.State != jobs.StateRunning || j.Worker != worker || j.Queue != string(queues.QueueLoan) || checkpointStep(j.Checkpoint) < 2 {
				return false
			}
		}
		return true
	})
	submitted := time.Now()
	core := r.submitGPUMark("core-2", filepath.Join(r.dir, "core.marks"), 2, 1)
	var started time.Time
	testenv.Eventually(t, 20*time.Second, "the 2-GPU core job started", func() bool {
		j := r.job(core)
		r.mustNotFail(j)
		if j.State == jobs.StateRunning || j.State == jobs.StateSucceeded {
			if j.Worker != worker {
				t.Fatalf("the core job ran on %q, want %q", j.Worker, worker)
			}
			started = j.StartedAt
			return true
		}
		return false
	})
	wait := started.Sub(submitted)
	t.Logf("the 2-GPU core job started %s after it was submitted (tick %s, grace %s)", wait.Round(time.Millisecond), hyTick, hyGrace)
	if bound := 4*hyTick + hyGrace + 2*time.Second; wait > bound {
		t.Errorf("the core job waited %s, more than %s (four ticks, the grace, two seconds of margin)", wait, bound)
	}
	reclaimed := 0
	for _, id := range burst {
		j := r.job(id)
		if j.Preemptions > 0 {
			reclaimed++
			if j.Checkpoint == "" {
				t.Errorf("the reclaimed job %s has no checkpoint to resume from", id)
			}
			// Its requeue is when its slots were free: the core job, held
			// on the worker for them, may not start earlier.
			if j.State == jobs.StateQueued && started.Before(j.QueuedAt) {
				t.Errorf("the core job started at %s, before the victim gave its GPUs back at %s", started.Format("15:04:05.000"), j.QueuedAt.Format("15:04:05.000"))
			}
		}
	}
	if reclaimed != 1 {
		t.Errorf("%d borrowed jobs were reclaimed, want exactly one (two GPUs free two)", reclaimed)
	}
}
