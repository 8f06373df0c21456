package sim

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// Two 4-slot on-demand workers each keep one 10-hour checkpointable job
// once their 10-minute jobs end. Billed as they are, they would cost 20
// worker-hours; rule 5 repacks the first worker's job onto the second's
// free slot and releases the first, so the pool pays about 10 hours and a
// quarter: the second worker's 10 h and the first's quarter hour, plus
// the moved job's checkpoint. Nothing is lost and nothing launches for
// the moved job.
func TestRepackReleasesAWorkerOfLeftovers(t *testing.T) {
	var js []trace.Job
	for i := range 8 {
		d := 10 * time.Minute
		if i == 0 || i == 4 {
			d = 10 * time.Hour
		}
		js = append(js, burstJob(time.Duration(i)*time.Second, d, true))
	}
	o := Options{Pools: []policy.Pool{quota(1), onDemand(1, 4)}, CheckpointOverhead: 30 * time.Second}
	r := runChecked(t, mkTrace(js...), o)
	od := pool(t, r, "od")
	if r.Jobs != 8 || r.Unfinished != 0 || r.LostWork != 0 {
		t.Fatalf("%d done, %d unfinished, %.2f slot-hours lost: want all 8 done, none lost", r.Jobs, r.Unfinished, r.LostWork)
	}
	if r.Preemptions.Repack != 1 || r.Actions[policy.Repack] != 1 || od.Launched != 2 {
		t.Errorf("repacks %d (actions %v), %d launched: want one repack and the two first workers only",
			r.Preemptions.Repack, r.Actions, od.Launched)
	}
	if od.WorkerHours < 10 || od.WorkerHours > 10.5 {
		t.Errorf("on-demand worker-hours %.2f; want 10 to 10.5 (20 without the repack)", od.WorkerHours)
	}
}

// On one-GPU on-demand workers, two 10-hour checkpointable shares of 0.4
// end up on two GPUs: the first shares its GPU with a 2-minute half that
// leaves no room for the second. Once the half ends, rule 5 moves one
// share into the room beside the other and releases its GPU, so the pool
// pays about 10 hours and a quarter, not 20. The half ends before the
// shares have run the pool's idle TTL, and nothing happens after: the
// simulator must wake when they have (mayRepack), or the move comes too
// late to save anything.
func TestRepackGathersSharesOnOneGPU(t *testing.T) {
	js := []trace.Job{shareJob(0, 10*time.Hour, 400, true), shareJob(0, 2*time.Minute, 500, true),
		shareJob(time.Second, 10*time.Hour, 400, true)}
	checkOneRepack(t, js, 1, 10.6)
}

// On 2-GPU on-demand workers, a checkpointable 0.45 share finds no room
// beside the shares of the first worker (0.5 and 0.4 on one GPU, 0.9 on
// the other) and starts a second. Once the 0.4 ends, the first worker's
// shares still sum past one GPU, so their sum promises no room; the GPU
// the worker reports shows 0.5 free, and rule 5 moves the share there
// and releases the second worker.
func TestRepackFindsRoomGPUByGPU(t *testing.T) {
	js := []trace.Job{
		shareJob(0, 10*time.Hour, 500, false),
		shareJob(time.Millisecond, 20*time.Minute, 400, false),
		shareJob(2*time.Millisecond, 10*time.Hour, 900, false),
		shareJob(5*time.Minute, 10*time.Hour, 450, true),
	}
	checkOneRepack(t, js, 2, 10.8)
}

// shareJob is a burst job of one GPU share.
func shareJob(at, d time.Duration, milli int, ckpt bool) trace.Job {
	j := burstJob(at, d, ckpt)
	j.Share = milli
	return j
}

// checkOneRepack runs js on on-demand workers of gpus GPUs, whose work
// keeps one worker 10 hours: every job must finish, one repack release
// the second worker, which nothing replaces, and the pool bill 10 to
// most worker-hours (20 without the repack).
func checkOneRepack(t *testing.T, js []trace.Job, gpus int, most float64) {
	t.Helper()
	o := Options{Pools: []policy.Pool{quota(1), onDemand(1, gpus)}, CheckpointOverhead: 30 * time.Second}
	r := runChecked(t, mkTrace(js...), o)
	od := pool(t, r, "od")
	if r.Jobs != len(js) || r.Unfinished != 0 || r.LostWork != 0 {
		t.Fatalf("%d done, %d unfinished, %.2f slot-hours lost: want all %d done, none lost", r.Jobs, r.Unfinished, r.LostWork, len(js))
	}
	if r.Preemptions.Repack != 1 || od.Launched != 2 {
		t.Errorf("repacks %d (actions %v), %d launched: want one repack and the two first workers only",
			r.Preemptions.Repack, r.Actions, od.Launched)
	}
	if od.WorkerHours < 10 || od.WorkerHours > most {
		t.Errorf("on-demand worker-hours %.2f; want 10 to %.1f (20 without the repack)", od.WorkerHours, most)
	}
}
