package gangs

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/queues"
)

// A gang placed as a reservation (rule 8: no worker had room for it yet)
// has members whose workers free their slots at different times. A member
// whose worker has room claims at once and waits for the others; one whose
// worker is still busy is not claimed: its delivery waits in that worker's
// own queue, or is held by it, until the slots free. Were the claimed
// member to give up after its start timeout regardless, a gang whose last
// worker frees late would be placed again and again, each time holding the
// early workers' slots for nothing. So at its deadline a claimed member
// asks Held whether every unclaimed member is still on its way, and waits
// on if so. The timeout then fires only for a member nobody will take: a
// delivery gone, or a worker dead, fenced or draining (for which the
// controller also takes the placement back).

// Held reports whether every member of gang jobID's attempt (n members)
// that is not claimed yet is on its way to its worker: its delivery of the
// attempt is in the worker's own queue (waiting, or held while the slots
// free) and the worker is alive (its incarnation lease stands) and not
// draining. It is false when no member is unclaimed (the gang is not
// waiting on anyone) or the attempt is not placed.
func (s *Store) Held(ctx context.Context, jobID string, attempt, n int) (bool, error) {
	ns, rdb := s.k.Namespace(), s.k.Redis()
	fields := []string{"placed"}
	for i := range n {
		fields = append(fields, "m"+strconv.Itoa(i))
	}
	v, err := rdb.HMGet(ctx, ns.Job(jobID), fields...).Result()
	if err != nil {
		return false, queues.Wrap("gangs.Held", err)
	}
	placed, _ := v[0].(string)
	ws := queues.PlacedWorkers(placed, attempt)
	if len(ws) != n {
		return false, nil
	}
	pre := strconv.Itoa(attempt) + "|"
	var missing []int
	for i := range n {
		if m, _ := v[i+1].(string); !strings.HasPrefix(m, pre) {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return false, nil
	}
	alive := make([]*redis.IntCmd, len(missing))
	reg := make([]*redis.SliceCmd, len(missing))
	_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for k, i := range missing {
			alive[k] = p.Exists(ctx, ns.WorkerIncarnation(ws[i]))
			reg[k] = p.HMGet(ctx, ns.Worker(ws[i]), queues.IntentDrainField, "info")
		}
		return nil
	})
	if err != nil {
		return false, queues.Wrap("gangs.Held", err)
	}
	for k, i := range missing {
		if alive[k].Val() == 0 || draining(reg[k].Val()) {
			return false, nil
		}
		info, err := s.inspector().GetTaskInfo(ns.AsynqQueue(queues.PlaceQueue(ws[i])), queues.MemberTaskID(jobID, attempt, i))
		switch {
		case errors.Is(err, asynq.ErrTaskNotFound) || errors.Is(err, asynq.ErrQueueNotFound):
			return false, nil
		case err != nil:
			return false, queues.Wrap("gangs.Held", err)
		case info.State == asynq.TaskStateArchived || info.State == asynq.TaskStateCompleted:
			return false, nil
		}
	}
	return true, nil
}

// draining reads a worker's registry fields queues.IntentDrainField and
// info: asked to drain by the controller, or draining by itself
// (stopping).
func draining(v []any) bool {
	if d, _ := v[0].(string); d != "" {
		return true
	}
	var info queues.WorkerInfo
	raw, _ := v[1].(string)
	return raw != "" && json.Unmarshal([]byte(raw), &info) == nil && info.Draining
}
