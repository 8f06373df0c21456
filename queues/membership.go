package queues

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Membership is which jobs the active index and the workers' claimed-job
// sets hold, without their records. The scripts that create or end a job,
// or start, finish or requeue an attempt, change one of them in the same
// step as the record, so a controller that compares two reads learns which
// of those records to read again without reading them all. Moves and
// placements of queued jobs change neither: the controller makes those
// itself, or learns of them otherwise.
type Membership struct {
	// Active lists the IDs in the active index (jobs queued or running);
	// for ActiveChanges, only those added at or after the time asked for.
	Active []string
	// LastAdded is when the latest job in the active index was added (its
	// submission, by the submitter's clock).
	LastAdded time.Time
	// Count is how many jobs the active index holds (ActiveChanges only).
	Count int
	// OnWorker holds, for each worker asked about, the IDs of the jobs it
	// has claimed and not finished (a gang's ID on each of its members'
	// workers).
	OnWorker map[string][]string
	// Ended are the usage entries of the attempts that ended (finished,
	// requeued, recovered) at or after the time asked for, as stored, with
	// their end: an attempt that starts and is requeued between two reads
	// leaves the other two memberships as they were, but not this.
	Ended []EndedAttempt
}

// EndedAttempt is one attempt's usage entry as Membership reads it: Key is
// the stored entry, unique per attempt, and End its score (the attempt's
// end, by the clock of the process that ended it). ActiveChanges also
// gives each departure (see Namespace.Departed) as one: Key is
// departedKeyPrefix and the job's ID, End when it left, and JobEnded is
// true.
type EndedAttempt struct {
	Key string
	End time.Time
}

// departedKeyPrefix starts the Key of a departure read as an EndedAttempt.
// No usage entry starts so: those are JSON objects.
const departedKeyPrefix = "departed:"

// JobID decodes the job the entry is of ("" if it is unreadable).
func (e EndedAttempt) JobID() string {
	if id, ok := strings.CutPrefix(e.Key, departedKeyPrefix); ok {
		return id
	}
	id, _ := e.decode()
	return id
}

// JobEnded decodes whether the attempt's end was its job's (it succeeded,
// failed or was cancelled): the script that wrote the entry removed the
// job from the active index in the same step. A retry, a requeue, a
// preemption or a lost worker leave the job active.
func (e EndedAttempt) JobEnded() bool {
	if strings.HasPrefix(e.Key, departedKeyPrefix) {
		return true
	}
	_, outcome := e.decode()
	switch jobs.State(outcome) {
	case jobs.StateSucceeded, jobs.StateFailed, jobs.StateCancelled:
		return true
	}
	return false
}

func (e EndedAttempt) decode() (job, outcome string) {
	var u struct {
		Job     string `json:"job"`
		Outcome string `json:"outcome"`
	}
	if json.Unmarshal([]byte(e.Key), &u) != nil {
		return "", ""
	}
	return u.Job, u.Outcome
}

// ActiveMembership reads the active index, the claimed-job sets of
// workers and the attempts ended since endedSince (zero: only the last
// one, to start from) in one round trip. It
// costs one short string per active job and per running member, and one
// entry per attempt ended since: a fraction of reading the records.
func (s *Store) ActiveMembership(ctx context.Context, workers []string, endedSince time.Time) (Membership, error) {
	return s.membership(ctx, workers, endedSince, time.Time{}, false)
}

// ActiveChanges is ActiveMembership for a reader that keeps the active
// index from one read to the next: instead of every ID in it, it reads
// those added at or after addedSince, and how many it holds, and with the
// ended attempts the departures since endedSince (a queued job's cancel
// ends no attempt). Every read is of one moment (a transaction), so a
// reader that adds what was added and removes what ended
// (EndedAttempt.JobEnded) knows its copy is whole when it holds Count
// IDs; when it does not (an ID was added with a time before addedSince,
// or an end or departure was stamped before endedSince by a clock behind
// the others), it reads the whole index.
func (s *Store) ActiveChanges(ctx context.Context, workers []string, endedSince, addedSince time.Time) (Membership, error) {
	return s.membership(ctx, workers, endedSince, addedSince, true)
}

// ActiveIndex reads every ID in the active index and when the latest was
// added: what ActiveChanges's reader reads when its copy does not add up.
func (s *Store) ActiveIndex(ctx context.Context) ([]string, time.Time, error) {
	var ids *redis.StringSliceCmd
	var last *redis.ZSliceCmd
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		ids = p.ZRange(ctx, s.ns.ActiveJobs(), 0, -1)
		last = p.ZRevRangeWithScores(ctx, s.ns.ActiveJobs(), 0, 0)
		return nil
	})
	if err != nil && err != redis.Nil {
		return nil, time.Time{}, wrap("queues.ActiveIndex", err)
	}
	var at time.Time
	if zs := last.Val(); len(zs) > 0 {
		at = time.UnixMilli(int64(zs[0].Score))
	}
	return ids.Val(), at, nil
}

func (s *Store) membership(ctx context.Context, workers []string, endedSince, addedSince time.Time, changes bool) (Membership, error) {
	var active *redis.ZSliceCmd
	var ids *redis.StringSliceCmd
	var count *redis.IntCmd
	var ended, departed *redis.ZSliceCmd
	sets := make([]*redis.StringSliceCmd, len(workers))
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if changes {
			ids = p.ZRangeByScore(ctx, s.ns.ActiveJobs(), &redis.ZRangeBy{
				Min: strconv.FormatInt(addedSince.UnixMilli(), 10), Max: "+inf"})
			count = p.ZCard(ctx, s.ns.ActiveJobs())
		} else {
			ids = p.ZRange(ctx, s.ns.ActiveJobs(), 0, -1)
		}
		// IDs come without their scores (a score costs its parse): only
		// the latest addition's is wanted.
		active = p.ZRevRangeWithScores(ctx, s.ns.ActiveJobs(), 0, 0)
		if endedSince.IsZero() {
			ended = p.ZRevRangeWithScores(ctx, s.ns.usage(), 0, 0)
		} else {
			ended = p.ZRangeByScoreWithScores(ctx, s.ns.usage(), &redis.ZRangeBy{
				Min: strconv.FormatInt(endedSince.UnixMilli(), 10), Max: "+inf"})
			if changes {
				departed = p.ZRangeByScoreWithScores(ctx, s.ns.Departed(), &redis.ZRangeBy{
					Min: strconv.FormatInt(endedSince.UnixMilli(), 10), Max: "+inf"})
			}
		}
		for i, w := range workers {
			sets[i] = p.SMembers(ctx, s.ns.WorkerJobs(w))
		}
		return nil
	})
	if err != nil && err != redis.Nil {
		return Membership{}, wrap("queues.ActiveMembership", err)
	}
	m := Membership{OnWorker: make(map[string][]string, len(workers))}
	m.Active = ids.Val()
	if zs := active.Val(); len(zs) > 0 {
		m.LastAdded = time.UnixMilli(int64(zs[0].Score))
	}
	if count != nil {
		m.Count = int(count.Val())
	}
	for i, w := range workers {
		m.OnWorker[w] = sets[i].Val()
	}
	for _, z := range ended.Val() {
		if key, ok := z.Member.(string); ok {
			m.Ended = append(m.Ended, EndedAttempt{Key: key, End: time.UnixMilli(int64(z.Score))})
		}
	}
	if departed != nil {
		for _, z := range departed.Val() {
			if id, ok := z.Member.(string); ok {
				m.Ended = append(m.Ended, EndedAttempt{Key: departedKeyPrefix + id, End: time.UnixMilli(int64(z.Score))})
			}
		}
	}
	return m, nil
}

// ActiveJobsOf reads the records of ids as ActiveJobs does, the fields that
// change and the spec only where spec does not supply it (a spec never
// changes), and returns the jobs still queued or running by ID. An ID
// missing from the result has ended, expired or never existed.
func (s *Store) ActiveJobsOf(ctx context.Context, ids []string, spec func(id string) (jobs.Spec, bool)) (map[string]jobs.Job, error) {
	out := make(map[string]jobs.Job, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	fields := make([]*redis.SliceCmd, len(ids))
	specs := make([]*redis.StringCmd, len(ids))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			fields[i] = p.HMGet(ctx, s.ns.Job(id), mutableFields...)
			if _, ok := spec(id); !ok {
				specs[i] = p.HGet(ctx, s.ns.Job(id), "spec")
			}
		}
		return nil
	})
	if err != nil && err != redis.Nil {
		return nil, wrap("queues.ActiveJobsOf", err)
	}
	for i, id := range ids {
		h := make(map[string]string, len(mutableFields))
		for k, v := range fields[i].Val() {
			if str, ok := v.(string); ok {
				h[mutableFields[k]] = str
			}
		}
		j := decodeFields(id, h)
		if j.State == "" || j.State.Terminal() {
			continue
		}
		sp, ok := spec(id)
		if !ok && (specs[i] == nil || json.Unmarshal([]byte(specs[i].Val()), &sp) != nil) {
			continue // unreadable, as ActiveJobs leaves it out
		}
		j.Spec = sp
		out[id] = j
	}
	return out, nil
}
