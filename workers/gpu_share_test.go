package workers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers"
)

// shareJob is a job of gpu_share share (0: a whole GPU) that writes the
// device variables it sees to JOB.up, then runs until JOB.go exists.
func (e *env) shareJob(share float64) jobs.Spec {
	s := e.shell(`v="$CUDA_VISIBLE_DEVICES $NVIDIA_VISIBLE_DEVICES $BALLAST_GPUS ${CUDA_MPS_ACTIVE_THREAD_PERCENTAGE:-none}"
echo "$v" > "$BALLAST_PARAM_DIR/$BALLAST_JOB_ID.tmp" && mv "$BALLAST_PARAM_DIR/$BALLAST_JOB_ID.tmp" "$BALLAST_PARAM_DIR/$BALLAST_JOB_ID.up"
while [ ! -f "$BALLAST_PARAM_DIR/$BALLAST_JOB_ID.go" ]; do sleep 0.02; done`)
	s.GPUShare = share
	return s
}

// sees waits until job j started and returns the device variables it saw.
func (e *env) sees(j jobs.Job) string {
	e.t.Helper()
	return strings.TrimSpace(e.waitFile(j.ID+".up", wait))
}

// beats waits for n heartbeats of w after now: each is a look the worker
// took at its queues many times over (it polls every few ms), so a job
// still queued after them was passed over, not missed by chance.
func (e *env) beats(w *workers.Worker, n int) {
	e.t.Helper()
	since := time.Now()
	seen := map[time.Time]bool{}
	testenv.Eventually(e.t, wait, "heartbeats of the worker", func() bool {
		if b := e.registered(w.ID()).LastBeat; b.After(since) {
			seen[b] = true
		}
		return len(seen) >= n
	})
}

// stillQueued fails the test unless j waits in its queue.
func (e *env) stillQueued(j jobs.Job, why string) {
	e.t.Helper()
	if got := e.get(j.ID); got.State != jobs.StateQueued {
		e.t.Fatalf("%s is %s on %q; %s", j.ID, got.State, got.Worker, why)
	}
}

// end lets job j end and waits until it succeeded; it returns when it
// told the job to end.
func (e *env) end(j jobs.Job) time.Time {
	e.t.Helper()
	at := time.Now()
	e.touch(j.ID + ".go")
	if got := e.waitTerminal(j.ID, wait); got.State != jobs.StateSucceeded {
		e.t.Fatalf("%s: state %s error %q", j.ID, got.State, got.LastError)
	}
	return at
}

// TestHalfGPUJobsShareOneGPU is the acceptance test of GPU shares, on a
// worker with one stand-in GPU (the test machines have none; the jobs only
// read the variables that bind them): two half-GPU jobs run at once, both
// bound to the same GPU; a third half waits until one of them ends; a
// whole-GPU job waits until every half has ended. With MPS on, each half
// is told 50 percent of the GPU, and the whole job nothing.
func TestHalfGPUJobsShareOneGPU(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o, _ := e.withControl() // wake-ups over a real NATS server, as a live worker has
	o.Slots = 0             // one per GPU
	o.GPUs = fakeGPUs(t, 1)
	o.MPS = true
	w := e.start(o)
	uuid := testenv.FakeGPUUUID(0)
	half := strings.Join([]string{uuid, uuid, uuid, "50"}, " ")

	a, b := e.submit(e.shareJob(0.5), queues.QueueCore), e.submit(e.shareJob(0.5), queues.QueueCore)
	// Neither ends before both have started: they run at once.
	for _, j := range []jobs.Job{a, b} {
		if got := e.sees(j); got != half {
			t.Errorf("%s sees %q, want %q: the one GPU in all three variables, and half of it", j.ID, got, half)
		}
	}
	testenv.Eventually(t, wait, "the registry to show both halves on GPU 0 and the worker busy", func() bool {
		r := e.registered(w.ID())
		if len(r.GPUs) != 1 {
			t.Fatalf("registered GPUs %+v, want one", r.GPUs)
		}
		g := r.GPUs[0]
		return r.Slots == 1 && r.Busy == 1 && g.Share == 1000 && strings.Contains(g.Job, a.ID) && strings.Contains(g.Job, b.ID)
	})

	c := e.submit(e.shareJob(0.5), queues.QueueCore)
	e.beats(w, 2)
	e.stillQueued(c, "a third half must wait while two halves fill the GPU")
	endedA := e.end(a)
	if got := e.sees(c); got != half {
		t.Errorf("the third half sees %q, want %q", got, half)
	}
	if s := e.get(c.ID).StartedAt; s.Before(endedA) {
		t.Errorf("the third half started at %s, before the first ended at %s", s.Format("15:04:05.000"), endedA.Format("15:04:05.000"))
	}

	whole := e.submit(e.shareJob(0), queues.QueueCore)
	e.beats(w, 2)
	e.stillQueued(whole, "a whole-GPU job must wait while halves hold the GPU")
	e.end(b)
	e.beats(w, 2)
	e.stillQueued(whole, "a whole-GPU job must wait while one half still holds the GPU")
	endedC := e.end(c)
	if got, want := e.sees(whole), strings.Join([]string{uuid, uuid, uuid, "none"}, " "); got != want {
		t.Errorf("the whole-GPU job sees %q, want %q", got, want)
	}
	if s := e.get(whole.ID).StartedAt; s.Before(endedC) {
		t.Errorf("the whole-GPU job started at %s, before the last half ended at %s", s.Format("15:04:05.000"), endedC.Format("15:04:05.000"))
	}
	testenv.Eventually(t, wait, "the registry to show the whole job alone on GPU 0", func() bool {
		g := e.registered(w.ID()).GPUs[0]
		return g.Job == whole.ID && g.Share == 0
	})
	e.end(whole)
	e.waitGPUsFree(w, "every job ended")
}

// TestSharesPackThroughAsynq: where shared deliveries come through asynq's
// server (as on Redis Cluster), each job is admitted to a whole slot, yet
// packed as it starts: two halves on a worker of two GPUs both run on
// GPU 0, which counts as the one busy slot, and GPU 1 stays free.
func TestSharesPackThroughAsynq(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := e.options()
	o.AsynqShared = true
	o.Slots = 0
	o.GPUs = fakeGPUs(t, 2)
	w := e.start(o)
	a, b := e.submit(e.shareJob(0.5), queues.QueueCore), e.submit(e.shareJob(0.5), queues.QueueCore)
	want := strings.Join([]string{testenv.FakeGPUUUID(0), testenv.FakeGPUUUID(0), testenv.FakeGPUUUID(0), "none"}, " ")
	for _, j := range []jobs.Job{a, b} {
		if got := e.sees(j); got != want {
			t.Errorf("%s sees %q, want %q", j.ID, got, want)
		}
	}
	testenv.Eventually(t, wait, "the registry to show both halves on GPU 0, GPU 1 free and one slot busy", func() bool {
		r := e.registered(w.ID())
		return r.Busy == 1 && r.GPUs[0].Share == 1000 && r.GPUs[1].Job == ""
	})
	e.end(a)
	e.end(b)
	e.waitGPUsFree(w, "both halves ended")
}
