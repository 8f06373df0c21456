package queues

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Sized jobs (jobs.Size.Sized: more than one slot, several members, or
// resources and labels to match) never wait in a queue that workers take
// from: asynq hands a task to any free goroutine of any worker reading
// the queue, and a goroutine is a job, not a slot, so a worker with one free
// slot would take an eight-slot job. Such a job waits in its logical queue
// with no task at all until the controller's policy places it (rule 8):
// Place records the worker of each member and writes one delivery per
// member into that worker's own queue (PlaceQueue), which only it reads,
// first. A worker that does not have the free slots yet holds the delivery
// and takes no one-slot work until they free: that hold is the reservation
// that keeps a large job from starving behind a stream of small ones.
//
// The placement belongs to one attempt. Any move (requeue, drain,
// preemption, the controller taking the placement back) starts a new
// attempt, which is unplaced: the record's "placed" field names the
// attempt it was written for, so no other script has to clear it.

// placeQueuePrefix starts the name of a worker's own queue.
const placeQueuePrefix = "place:"

// PlaceQueue is the queue only worker reads, where placed deliveries for it
// go. It is named after the ID the worker started under: a worker the
// controller fenced under a new ID stops being a placement target (see
// WorkerInfo.PlaceQueue).
func PlaceQueue(worker string) Queue { return Queue(placeQueuePrefix + worker) }

// placeTimeout is added to a placed delivery's asynq timeout: asynq counts
// from when the worker takes the task, and the worker may hold it while the
// slots it waits for are still busy. The hold never lasts longer than the
// longest job ahead of it can run.
const placeTimeout = jobs.MaxTimeout

// decodePlaced reads the "placed" field ("ATTEMPT|w0,w1,...", written by
// placeScript): the member workers when it was written for attempt, else
// nil.
func decodePlaced(v string, attempt int) []string {
	n, list, ok := strings.Cut(v, "|")
	if !ok || list == "" || n != strconv.Itoa(attempt) {
		return nil
	}
	return strings.Split(list, ",")
}

// placeScript places a queued sized job as a new attempt, so no delivery
// of the attempt it replaces can start it: an unplaced job, or one placed
// at attempt whose reservation moves (ARGV[5] = "1"). KEYS: job, outbox.
// ARGV: id, attempt, now, workers (comma list), move. Returns the record
// as a flat HGETALL list, or {} when the job is not queued at attempt, or
// is placed there and this is no move.
var placeScript = redis.NewScript(`
local st = redis.call("HMGET", KEYS[1], "state", "attempt", "placed")
if st[1] ~= "queued" or tonumber(st[2]) ~= tonumber(ARGV[2]) then return {} end
local placed = st[3] and string.sub(st[3], 1, string.len(ARGV[2]) + 1) == ARGV[2] .. "|"
if placed ~= (ARGV[5] == "1") then return {} end
local next = tonumber(st[2]) + 1
redis.call("HSET", KEYS[1], "attempt", next, "placed", next .. "|" .. ARGV[4], "placed_at", ARGV[3], "ob", "1")
redis.call("ZADD", KEYS[2], ARGV[3], ARGV[1])
return redis.call("HGETALL", KEYS[1])
`)

// ErrNotPlaceable is returned by Place for a job that needs no placement.
var ErrNotPlaceable = errors.New("the job is one slot and waits in a shared queue")

// Place puts the members of a queued sized job on workers, member i on
// workers[i], and writes their deliveries. It returns the new attempt, or 0
// when the job is no longer queued and unplaced at attempt (it was placed,
// moved, cancelled or started meanwhile: the caller's view is stale and
// nothing was written). A failure after the record changed leaves the
// deliveries to the outbox.
func (s *Store) Place(ctx context.Context, jobID string, attempt int, workers []string) (int, error) {
	return s.place(ctx, jobID, attempt, workers, false)
}

// MovePlacement places again a job placed at attempt that has not started
// (a reservation whose slots are still busy) on workers where it fits now:
// a new attempt, so the deliveries held on the old workers are stale and a
// member claimed there gives its slots back. It returns the new attempt,
// or 0 when the job is no longer queued and placed at attempt.
func (s *Store) MovePlacement(ctx context.Context, jobID string, attempt int, workers []string) (int, error) {
	return s.place(ctx, jobID, attempt, workers, true)
}

func (s *Store) place(ctx context.Context, jobID string, attempt int, workers []string, move bool) (int, error) {
	if len(workers) == 0 {
		return 0, fmt.Errorf("queues.Place %s: no workers given", jobID)
	}
	for _, w := range workers {
		if w == "" || strings.ContainsAny(w, ",|") {
			return 0, fmt.Errorf("queues.Place %s: worker ID %q cannot be placed on", jobID, w)
		}
	}
	// The size never changes, so checking it before the fenced write is safe.
	cur, err := s.Get(ctx, jobID)
	if err != nil {
		return 0, err
	}
	if !cur.Spec.Sized() {
		return 0, fmt.Errorf("queues.Place %s: %w", jobID, ErrNotPlaceable)
	}
	if len(workers) != cur.Spec.Members() {
		return 0, fmt.Errorf("queues.Place %s: %d workers for %d members", jobID, len(workers), cur.Spec.Members())
	}
	v, err := placeScript.Run(ctx, s.rdb, []string{s.ns.Job(jobID), s.ns.Outbox()},
		jobID, attempt, s.opts.Now().UnixMilli(), strings.Join(workers, ","), flag(move)).Slice()
	if err != nil {
		return 0, wrap("queues.Place", err)
	}
	if len(v) == 0 {
		return 0, nil
	}
	j, err := decodeRecord(jobID, pairsToMap(v))
	if err != nil {
		return 0, err
	}
	if err := s.enqueue(ctx, j); err != nil {
		return j.Attempt, err
	}
	return j.Attempt, nil
}

// MemberTaskID is the asynq task ID of one member's delivery: TaskID for
// member 0, so a single sized job's task is found like any other.
func MemberTaskID(jobID string, attempt, member int) string {
	if member == 0 {
		return TaskID(jobID, attempt)
	}
	return TaskID(jobID, attempt) + ":" + strconv.Itoa(member)
}

// enqueuePlaced writes the deliveries of a sized job's current attempt: none
// while it is unplaced, one per member in its worker's queue once placed.
func (s *Store) enqueuePlaced(ctx context.Context, j jobs.Job) error {
	for i, w := range j.Placed {
		opts := []asynq.Option{
			asynq.TaskID(MemberTaskID(j.ID, j.Attempt, i)),
			asynq.Queue(s.ns.AsynqQueue(PlaceQueue(w))),
			asynq.Timeout(j.Spec.Timeout.Std() + j.Spec.Grace.Std() + timeoutSlack + placeTimeout),
			asynq.MaxRetry(infraRetries),
			asynq.Retention(0),
		}
		if j.NotBefore.After(s.opts.Now()) {
			opts = append(opts, asynq.ProcessAt(j.NotBefore))
		}
		d := Delivery{JobID: j.ID, Attempt: j.Attempt, Slots: j.Spec.SlotCount(), Member: i}
		if n := j.Spec.Members(); n > 1 {
			d.Members = n
		}
		_, err := s.client.EnqueueContext(ctx, asynq.NewTask(TaskType, d.Encode()), opts...)
		if err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
			return fmt.Errorf("queues.enqueue %s: %w (the placement is recorded and will be enqueued when Redis answers: %v)",
				MemberTaskID(j.ID, j.Attempt, i), jobs.ErrUnavailable, err)
		}
	}
	return nil
}

// PlacedRecheck is how often a worker holding a placed delivery while its
// slots are busy checks that the placement still stands.
const PlacedRecheck = 2 * time.Second

// AttemptState returns a job's state and current attempt, for a worker
// holding a delivery it has not claimed yet. jobs.ErrNotFound when the
// record is gone.
func (s *Store) AttemptState(ctx context.Context, jobID string) (jobs.State, int, error) {
	v, err := s.rdb.HMGet(ctx, s.ns.Job(jobID), "state", "attempt").Result()
	if err != nil {
		return "", 0, wrap("queues.AttemptState", err)
	}
	st, _ := v[0].(string)
	if st == "" {
		return "", 0, fmt.Errorf("queues.AttemptState %q: %w", jobID, jobs.ErrNotFound)
	}
	n, _ := v[1].(string)
	return jobs.State(st), atoi(n), nil
}
