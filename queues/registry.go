package queues

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// WorkerInfo is what a worker tells the registry about itself.
type WorkerInfo struct {
	ID    string `json:"id"`
	Pool  string `json:"pool"`
	Slots int    `json:"slots"`
	Busy  int    `json:"busy"`
	// PlaceQueue is the queue the worker reads placed deliveries from (see
	// PlaceQueue); empty when it takes none, as after a fence gave it a new ID.
	PlaceQueue string    `json:"place_queue,omitempty"`
	Queues     []Queue   `json:"queues"`
	Host       string    `json:"host"`
	PID        int       `json:"pid"`
	Draining   bool      `json:"draining,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	// IdentitySince is when this registry identity began: the process's
	// start, or its re-registration under a new ID after the controller
	// fenced the old one (whose life ended at its last heartbeat). A new
	// identity's life is billed from here, so the process's time before
	// is not billed twice. Zero means StartedAt.
	IdentitySince time.Time `json:"identity_since,omitzero"`
	// Incarnation is a random token of this process start. A new process
	// under the same ID takes the ID over (Register); the old one, if it
	// still runs, is fenced.
	Incarnation string `json:"incarnation,omitempty"`
	// Spot is true for a worker of a spot pool: only those accept a spot
	// notice (RequestSpotNotice).
	Spot bool `json:"spot,omitempty"`
	// Isolation is the QoS isolation in force on the worker (nil: a worker
	// from before QoS groups, which enforced none).
	Isolation *Isolation `json:"isolation,omitempty"`
	// Labels describe the worker's capacity for placement and display:
	// gpu_model (LabelGPUModel) on a GPU worker.
	Labels map[string]string `json:"labels,omitempty"`
	// GPUs are the devices of a GPU worker, each with the job holding it:
	// on such a worker a slot is a GPU.
	GPUs []GPUInfo `json:"gpus,omitempty"`
	// CPUs and Memory (bytes) are what the worker offers sized jobs that
	// ask for CPUs or memory; 0 when it does not say.
	CPUs   float64 `json:"cpus,omitempty"`
	Memory int64   `json:"memory,omitempty"`
	// SelfFences counts the times the worker process fenced itself (it
	// could not renew this entry for most of the worker TTL, and stopped
	// its jobs), and SelfFencedSeconds the time it spent so, since it
	// started; it reports them once it is back.
	SelfFences        int     `json:"self_fences,omitempty"`
	SelfFencedSeconds float64 `json:"self_fenced_seconds,omitempty"`
	// LastBeat is filled in when reading the registry.
	LastBeat time.Time `json:"last_beat"`
	// BilledFrom is when the worker's life began for billing, filled in
	// when reading the registry: its launch when the controller recorded
	// one, else StartedAt.
	BilledFrom time.Time `json:"billed_from,omitzero"`
}

// LabelGPUModel is the label holding a GPU worker's GPU model: the model
// name when all its GPUs share one, else "mixed".
const LabelGPUModel = "gpu_model"

// GPUInfo is one GPU of a worker.
type GPUInfo struct {
	Index     int    `json:"index"`
	UUID      string `json:"uuid"`
	Name      string `json:"name"`
	MemoryMiB int    `json:"memory_mib"`
	// Job is the ID of the job whose attempt holds the GPU ("" = free),
	// or of the jobs sharing it, comma-separated.
	Job string `json:"job,omitempty"`
	// Share is the thousandths of the GPU that shares hold (0 when it is
	// free or held whole).
	Share int `json:"share,omitempty"`
}

// Beat is the registry's answer to a heartbeat.
type Beat struct {
	// Fenced is true when the controller declared this worker dead, or a
	// newer incarnation took its ID: its jobs were requeued and it must stop
	// them without recording anything.
	Fenced bool
	// Cancel lists running jobs whose cancellation was requested.
	Cancel []string
	// Preempt lists running jobs the controller asked to checkpoint and
	// move (RequestPreempt). A job with a cancel pending is only in Cancel.
	Preempt []string
	// Lost lists running jobs whose attempt is no longer this worker's.
	Lost []string
	// Drain is true once a drain was recorded for this worker
	// (RequestDrain): it must take no more work.
	Drain bool
	// SpotNotice is the deadline of a spot notice recorded for this worker
	// (RequestSpotNotice); zero when there is none.
	SpotNotice time.Time
	// TakenOver lists, at registration, the jobs of the previous
	// incarnation requeued because no live process of this ID runs them
	// (they are already enqueued when Register returns).
	TakenOver []Recovered
	// Unrecorded lists the attempts on record as running on this worker,
	// claimed more than orphanGrace ago, that the beat did not report (see
	// unrecorded.go), with Members set for a gang's. The beat changed
	// nothing for them: the worker records again the end of those it ended
	// (Refinish) and requeues the others (RequeueUnrecorded; a gang's once
	// every member's worker has said it runs none of it).
	Unrecorded []Delivery
}

// incarnationTTL is how long an ID remembers its last incarnation after the
// last beat: as long as a recovery tombstone, so a process paused for less
// is still fenced when it wakes.
const incarnationTTL = time.Hour

// Register is a worker process's first heartbeat. It takes the ID over from
// any previous incarnation (w.Incarnation differs): that one's jobs are
// requeued as new attempts at once and enqueued, rather than waiting for the
// controller to find the ID silent, which it never would while the new
// process beats.
func (s *Store) Register(ctx context.Context, w WorkerInfo) (Beat, error) {
	b, err := s.beat(ctx, w, nil, true)
	if err != nil {
		return b, err
	}
	return b, s.enqueueRequeued(ctx, b.TakenOver)
}

// Heartbeat refreshes w in the registry and checks its running deliveries.
func (s *Store) Heartbeat(ctx context.Context, w WorkerInfo, running []Delivery) (Beat, error) {
	b, err := s.beat(ctx, w, running, false)
	if err != nil {
		return b, err
	}
	return b, s.enqueueRequeued(ctx, b.TakenOver)
}

// requeuedList reads the flat {id, newAttempt, queue, ...} the scripts
// that requeue a worker's jobs return (requeueWorkerJobsLua).
func requeuedList(v []any, worker string) []Recovered {
	var out []Recovered
	for i := 0; i+2 < len(v); i += 3 {
		n, _ := v[i+1].(int64)
		out = append(out, Recovered{JobID: fmt.Sprint(v[i]), Worker: worker, Attempt: int(n), Queue: fmt.Sprint(v[i+2])})
	}
	return out
}

// enqueueRequeued enqueues the next attempts of requeued jobs.
func (s *Store) enqueueRequeued(ctx context.Context, rs []Recovered) error {
	for _, r := range rs {
		j, err := s.Get(ctx, r.JobID)
		if err == nil {
			// Left in the outbox on failure; the reconciler retries.
			err = s.enqueue(ctx, j)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) beat(ctx context.Context, w WorkerInfo, running []Delivery, register bool) (Beat, error) {
	inc := w.Incarnation
	if inc == "" {
		// Tools and tests that beat for a worker without being one share
		// one token: they never take over from each other.
		inc = "-"
	}
	info, _ := json.Marshal(w)
	keys := []string{s.ns.Workers(), s.ns.Worker(w.ID), s.ns.WorkerTombstone(w.ID), s.ns.lives(), s.ns.launches(),
		s.ns.WorkerIncarnation(w.ID), s.ns.WorkerJobs(w.ID), s.ns.Outbox(), s.ns.ActiveJobs(), s.ns.usage(), s.ns.livesEnd()}
	since := w.IdentitySince
	if since.IsZero() {
		since = w.StartedAt
	}
	now := s.opts.Now()
	args := []any{w.ID, now.UnixMilli(), info, w.Slots, since.UnixMilli(), w.Pool, inc, flag(register), flag(w.Spot),
		s.ns.JobPrefix(), s.opts.Retention.Milliseconds(), incarnationTTL.Milliseconds(), s.ns.WorkerPrefix()}
	for _, d := range running {
		keys = append(keys, s.ns.Job(d.JobID))
		args = append(args, d.JobID+":"+strconv.Itoa(d.Attempt))
	}
	v, err := heartbeatScript.Run(ctx, s.rdb, keys, args...).Result()
	if err != nil {
		return Beat{}, wrap("queues.Heartbeat", err)
	}
	if v == "fenced" {
		return Beat{Fenced: true}, nil
	}
	var b Beat
	res, _ := v.([]any)
	if len(res) != 5 {
		return Beat{}, fmt.Errorf("queues.Heartbeat: unexpected reply %v", v)
	}
	b.Drain = res[0] == "1"
	if ms, err := strconv.ParseInt(fmt.Sprint(res[1]), 10, 64); err == nil && ms > 0 {
		b.SpotNotice = time.UnixMilli(ms).UTC()
	}
	taken, _ := res[2].([]any)
	b.TakenOver = requeuedList(taken, w.ID)
	unrec, _ := res[4].([]any)
	for i := 0; i+2 < len(unrec); i += 3 {
		id, _ := unrec[i].(string)
		n, _ := unrec[i+1].(int64)
		d := Delivery{JobID: id, Attempt: int(n)}
		if g, _ := unrec[i+2].(int64); g > 1 {
			d.Members = int(g)
		}
		b.Unrecorded = append(b.Unrecorded, d)
	}
	list, _ := res[3].([]any)
	for i := 0; i+1 < len(list); i += 2 {
		id, _ := list[i].(string)
		switch list[i+1] {
		case "cancel":
			b.Cancel = append(b.Cancel, id)
		case "preempt":
			b.Preempt = append(b.Preempt, id)
		default:
			b.Lost = append(b.Lost, id)
		}
	}
	return b, nil
}

// Deregister removes a worker that stops cleanly and ends its life record.
func (s *Store) Deregister(ctx context.Context, id string) error {
	err := deregisterScript.Run(ctx, s.rdb, []string{s.ns.Workers(), s.ns.Worker(id), s.ns.livesEnd()},
		id, s.opts.Now().UnixMilli()).Err()
	return wrap("queues.Deregister", err)
}

// Recovered is one job requeued because its worker died.
type Recovered struct {
	JobID   string
	Worker  string
	Attempt int
	Queue   string
	// Silence is how long the worker had been silent when it was declared dead.
	Silence time.Duration
}

// RecoverDeadWorkers declares dead every worker silent for longer than ttl,
// requeues its running jobs as new attempts (they resume from their last
// checkpoint) and enqueues them. The dead worker is fenced: if it was only
// slow, its next heartbeat tells it to stop those jobs.
func (s *Store) RecoverDeadWorkers(ctx context.Context, ttl time.Duration) ([]Recovered, error) {
	now := s.opts.Now()
	cutoff := now.Add(-ttl).UnixMilli()
	dead, err := s.rdb.ZRangeByScoreWithScores(ctx, s.ns.Workers(), &redis.ZRangeBy{
		Min: "-inf", Max: "(" + itoa64(cutoff)}).Result()
	if err != nil {
		return nil, wrap("queues.RecoverDeadWorkers", err)
	}
	var out []Recovered
	for _, z := range dead {
		rs, err := s.recoverWorker(ctx, z.Member.(string), now, cutoff)
		out = append(out, rs...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// RecoverWorker declares worker id dead now, however recent its last
// heartbeat, and requeues its jobs as RecoverDeadWorkers does. It is for a
// worker whose process is known to have exited (its provider reaped it), so
// its jobs need not wait out the worker TTL. A worker that already left the
// registry has nothing to requeue.
func (s *Store) RecoverWorker(ctx context.Context, id string) ([]Recovered, error) {
	now := s.opts.Now()
	// Any heartbeat up to now is before the cutoff: the process is gone.
	return s.recoverWorker(ctx, id, now, now.UnixMilli()+1)
}

func (s *Store) recoverWorker(ctx context.Context, id string, now time.Time, cutoff int64) ([]Recovered, error) {
	beat, _ := s.rdb.ZScore(ctx, s.ns.Workers(), id).Result()
	v, err := recoverWorkerScript.Run(ctx, s.rdb,
		[]string{s.ns.Workers(), s.ns.Worker(id), s.ns.WorkerJobs(id), s.ns.WorkerTombstone(id), s.ns.Outbox(), s.ns.ActiveJobs(),
			s.ns.usage(), s.ns.livesEnd()},
		id, now.UnixMilli(), cutoff, s.ns.JobPrefix(), time.Hour.Milliseconds(), s.opts.Retention.Milliseconds(),
		s.ns.WorkerPrefix()).Slice()
	if err != nil {
		return nil, wrap("queues.RecoverDeadWorkers", err)
	}
	var silence time.Duration
	if beat > 0 {
		silence = now.Sub(time.UnixMilli(int64(beat)))
	}
	var out []Recovered
	for _, r := range requeuedList(v, id) {
		r.Silence = silence
		j, err := s.Get(ctx, r.JobID)
		if err == nil {
			// Left in the outbox on failure; the reconciler retries.
			err = s.enqueue(ctx, j)
		}
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}
