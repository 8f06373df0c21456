package flows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/sweep"
	"github.com/ballastdev/ballast/queues"
)

// SweepState is where a sweep is in its life.
type SweepState string

// The states of a sweep.
const (
	// SweepRunning: trials are pending, queued or running.
	SweepRunning SweepState = "running"
	// SweepCompleted: every trial ended (succeeded, failed or stopped).
	SweepCompleted SweepState = "completed"
	// SweepCancelled: cancelled; no trial is enqueued after the cancel, and
	// the controller cancels those already queued or running.
	SweepCancelled SweepState = "cancelled"
)

// SweepRecord is the record of one sweep. Trial specs are resolved against
// the catalog at submission and stored with it, so a template edited later
// does not change trials not yet enqueued.
type SweepRecord struct {
	ID    string     `json:"id"`
	Spec  sweep.Spec `json:"spec"`
	State SweepState `json:"state"`
	// Total is the number of trials; Cursor the number enqueued so far
	// (trials are enqueued in index order).
	Total     int       `json:"total"`
	Cursor    int       `json:"cursor"`
	CreatedAt time.Time `json:"created_at"`
	// FinishedAt is set when the sweep has ended and, for a cancelled one,
	// when none of its trials is queued or running any more.
	FinishedAt time.Time `json:"finished_at,omitempty"`
	// Trials maps each enqueued trial's index to its job.
	Trials map[int]string `json:"trials"`
	// Stopped holds the trials the median rule stopped.
	Stopped map[int]bool `json:"stopped,omitempty"`
}

// TrialIdempotencyKey is the idempotency key of trial i's job. It is derived
// from the sweep, not from the caller's key, so the controller can enqueue a
// trial again after a crash and always get the same job.
func TrialIdempotencyKey(sweepID string, i int) string {
	return "sweep:" + sweepID + ":" + strconv.Itoa(i)
}

// NewSweep describes a sweep to create.
type NewSweep struct {
	Spec sweep.Spec
	// Trials are the resolved job specs, trial i at index i.
	Trials []jobs.Spec
	// Fingerprint identifies the request for idempotency (a hash of the
	// spec); the same key with another fingerprint is a conflict.
	Fingerprint string
}

// claimSweepScript maps an idempotency key to a new sweep ID, or returns
// the ID it already maps to.
// KEYS: idem. ARGV: id, fingerprint, ttlMs. Returns {"new"|"dup"|"conflict", id}.
var claimSweepScript = redis.NewScript(`
local ex = redis.call("GET", KEYS[1])
if ex then
  local sep = string.find(ex, "|", 1, true)
  local eid = string.sub(ex, 1, sep - 1)
  if string.sub(ex, sep + 1) ~= ARGV[2] then return {"conflict", eid} end
  return {"dup", eid}
end
redis.call("SET", KEYS[1], ARGV[1] .. "|" .. ARGV[2], "PX", ARGV[3])
return {"new", ARGV[1]}
`)

// specChunk bounds the values of one RPUSH when storing trial specs.
const specChunk = 500

// CreateSweep records a sweep and its trial specs. With an idempotency key
// already used for the same spec it returns that sweep (duplicate true); if
// that earlier call died before writing the record, this call writes it
// under the same ID. The record and the specs are written in one MULTI, so
// a reader never sees a sweep without its trials.
func (s *Store) CreateSweep(ctx context.Context, ns NewSweep) (rec SweepRecord, duplicate bool, err error) {
	now := s.k.Now()
	id := jobs.NewID(now)
	if key := ns.Spec.IdempotencyKey; key != "" {
		res, err := claimSweepScript.Run(ctx, s.rdb, []string{s.sweepIdem(key)}, id, ns.Fingerprint,
			s.k.IdempotencyTTL().Milliseconds()).StringSlice()
		if err != nil {
			return SweepRecord{}, false, queues.Wrap("flows.CreateSweep", err)
		}
		switch res[0] {
		case "conflict":
			return SweepRecord{}, false, fmt.Errorf("flows.CreateSweep: %w: key %q belongs to sweep %s; use a new key for a different sweep",
				jobs.ErrIdempotencyConflict, key, res[1])
		case "dup":
			id = res[1]
			rec, err := s.GetSweep(ctx, id)
			if err == nil {
				return rec, true, nil
			}
			if !errors.Is(err, jobs.ErrNotFound) {
				return SweepRecord{}, false, err
			}
			// The first call claimed the key and died: write it now.
		}
	}
	spec, err := json.Marshal(ns.Spec)
	if err != nil {
		return SweepRecord{}, false, fmt.Errorf("flows.CreateSweep: encode spec: %w", err)
	}
	encoded := make([]any, len(ns.Trials))
	for i, t := range ns.Trials {
		b, err := json.Marshal(t)
		if err != nil {
			return SweepRecord{}, false, fmt.Errorf("flows.CreateSweep: encode trial %d: %w", i, err)
		}
		encoded[i] = b
	}
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, s.sweepSpecs(id), s.sweepTrials(id), s.sweepStopped(id))
		for i := 0; i < len(encoded); i += specChunk {
			p.RPush(ctx, s.sweepSpecs(id), encoded[i:min(i+specChunk, len(encoded))]...)
		}
		p.HSet(ctx, s.sweep(id), "spec", spec, "state", string(SweepRunning), "total", len(ns.Trials),
			"cursor", 0, "created", now.UnixMilli())
		p.ZAdd(ctx, s.sweeps(), redis.Z{Score: float64(now.UnixMilli()), Member: id})
		p.SAdd(ctx, s.activeSweeps(), id)
		return nil
	})
	if err != nil {
		return SweepRecord{}, false, queues.Wrap("flows.CreateSweep", err)
	}
	rec, err = s.GetSweep(ctx, id)
	return rec, false, err
}

// GetSweep returns a sweep record with its trials' jobs.
func (s *Store) GetSweep(ctx context.Context, id string) (SweepRecord, error) {
	pipe := s.rdb.Pipeline()
	h := pipe.HGetAll(ctx, s.sweep(id))
	tr := pipe.HGetAll(ctx, s.sweepTrials(id))
	st := pipe.SMembers(ctx, s.sweepStopped(id))
	if _, err := pipe.Exec(ctx); err != nil {
		return SweepRecord{}, queues.Wrap("flows.GetSweep", err)
	}
	if len(h.Val()) == 0 {
		return SweepRecord{}, fmt.Errorf("flows.GetSweep %q: %w (records are kept for the retention period)", id, jobs.ErrNotFound)
	}
	v := h.Val()
	rec := SweepRecord{ID: id, State: SweepState(v["state"]), Total: atoi(v["total"]), Cursor: atoi(v["cursor"]),
		CreatedAt: queues.FieldTime(v["created"]), FinishedAt: queues.FieldTime(v["finished"]),
		Trials: make(map[int]string, len(tr.Val())), Stopped: map[int]bool{}}
	if err := json.Unmarshal([]byte(v["spec"]), &rec.Spec); err != nil {
		return rec, fmt.Errorf("flows: sweep %s has an unreadable spec: %w", id, err)
	}
	for k, job := range tr.Val() {
		if i, err := strconv.Atoi(k); err == nil {
			rec.Trials[i] = job
		}
	}
	for _, k := range st.Val() {
		if i, err := strconv.Atoi(k); err == nil {
			rec.Stopped[i] = true
		}
	}
	return rec, nil
}

// TrialSpecs returns the job specs of trials [from, to).
func (s *Store) TrialSpecs(ctx context.Context, sweepID string, from, to int) ([]jobs.Spec, error) {
	if to <= from {
		return nil, nil
	}
	raw, err := s.rdb.LRange(ctx, s.sweepSpecs(sweepID), int64(from), int64(to-1)).Result()
	if err != nil {
		return nil, queues.Wrap("flows.TrialSpecs", err)
	}
	out := make([]jobs.Spec, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal([]byte(r), &out[i]); err != nil {
			return nil, fmt.Errorf("flows: sweep %s trial %d has an unreadable spec: %w", sweepID, from+i, err)
		}
	}
	return out, nil
}

// recordTrialsScript records the jobs of enqueued trials. The jobs are
// recorded whatever the sweep's state, so a cancel that raced the enqueue
// still finds them; the cursor moves only while the sweep runs.
// KEYS: sweep, trials. ARGV: cursor, index, job, index, job, ...
// Returns the sweep's state.
var recordTrialsScript = redis.NewScript(`
local st = redis.call("HGET", KEYS[1], "state")
if not st then return "gone" end
for i = 2, #ARGV, 2 do
  redis.call("HSET", KEYS[2], ARGV[i], ARGV[i + 1])
end
if st == "running" and tonumber(redis.call("HGET", KEYS[1], "cursor")) < tonumber(ARGV[1]) then
  redis.call("HSET", KEYS[1], "cursor", ARGV[1])
end
return st
`)

// RecordTrials records that the trials in jobsByIndex are enqueued and that
// every trial below cursor is. It returns the sweep's state: a caller that
// gets SweepCancelled must cancel the jobs it just enqueued.
func (s *Store) RecordTrials(ctx context.Context, sweepID string, jobsByIndex map[int]string, cursor int) (SweepState, error) {
	args := []any{cursor}
	for i, job := range jobsByIndex {
		args = append(args, i, job)
	}
	st, err := recordTrialsScript.Run(ctx, s.rdb, []string{s.sweep(sweepID), s.sweepTrials(sweepID)}, args...).Text()
	if err != nil {
		return "", queues.Wrap("flows.RecordTrials", err)
	}
	if st == "gone" {
		return "", fmt.Errorf("flows.RecordTrials %q: %w", sweepID, jobs.ErrNotFound)
	}
	return SweepState(st), nil
}

// cancelSweepScript marks a running sweep cancelled.
// KEYS: sweep. ARGV: now. Returns "cancelled", "ended" (it was no longer
// running), or "gone".
var cancelSweepScript = redis.NewScript(`
local st = redis.call("HGET", KEYS[1], "state")
if not st then return "gone" end
if st ~= "running" then return "ended" end
redis.call("HSET", KEYS[1], "state", "cancelled", "cancelled", ARGV[1])
return "cancelled"
`)

// CancelSweep marks a sweep cancelled: no trial is enqueued from now on.
// It reports whether this call cancelled it; the caller (and, until all are
// ended, every controller tick) cancels the trials' jobs.
func (s *Store) CancelSweep(ctx context.Context, sweepID string) (bool, error) {
	st, err := cancelSweepScript.Run(ctx, s.rdb, []string{s.sweep(sweepID)}, s.k.Now().UnixMilli()).Text()
	if err != nil {
		return false, queues.Wrap("flows.CancelSweep", err)
	}
	if st == "gone" {
		return false, fmt.Errorf("flows.CancelSweep %q: %w", sweepID, jobs.ErrNotFound)
	}
	return st == "cancelled", nil
}

// StopTrial records that the median rule stopped trial i.
func (s *Store) StopTrial(ctx context.Context, sweepID string, i int) error {
	return queues.Wrap("flows.StopTrial", s.rdb.SAdd(ctx, s.sweepStopped(sweepID), i).Err())
}

// finishSweepScript ends a sweep: a running one becomes state, a cancelled
// one stays cancelled; either way it leaves the active set and its keys
// expire after the retention.
// KEYS: sweep, trials, specs, stopped, active. ARGV: id, state, now, retentionMs.
var finishSweepScript = redis.NewScript(`
local st = redis.call("HGET", KEYS[1], "state")
if not st or redis.call("HEXISTS", KEYS[1], "finished") == 1 then return 0 end
if st == "running" then redis.call("HSET", KEYS[1], "state", ARGV[2]) end
redis.call("HSET", KEYS[1], "finished", ARGV[3])
redis.call("SREM", KEYS[5], ARGV[1])
for i = 1, 4 do redis.call("PEXPIRE", KEYS[i], ARGV[4]) end
return 1
`)

// FinishSweep ends a sweep once none of its trials will run again. It
// reports whether this call ended it.
func (s *Store) FinishSweep(ctx context.Context, sweepID string, state SweepState) (bool, error) {
	n, err := finishSweepScript.Run(ctx, s.rdb, []string{s.sweep(sweepID), s.sweepTrials(sweepID),
		s.sweepSpecs(sweepID), s.sweepStopped(sweepID), s.activeSweeps()},
		sweepID, string(state), s.k.Now().UnixMilli(), s.k.Retention().Milliseconds()).Int()
	if err != nil {
		return false, queues.Wrap("flows.FinishSweep", err)
	}
	return n == 1, nil
}

// ActiveSweeps returns the IDs of sweeps not yet finished, oldest first.
func (s *Store) ActiveSweeps(ctx context.Context) ([]string, error) {
	ids, err := s.rdb.SMembers(ctx, s.activeSweeps()).Result()
	if err != nil {
		return nil, queues.Wrap("flows.ActiveSweeps", err)
	}
	// IDs start with their creation time in hex: sorting them sorts by age.
	sort.Strings(ids)
	return ids, nil
}

// ListSweeps returns the most recent sweeps' IDs, newest first, at most
// limit (0 = 50).
func (s *Store) ListSweeps(ctx context.Context, limit int) ([]string, error) {
	if limit <= 0 {
		limit = 50
	}
	ids, err := s.rdb.ZRevRange(ctx, s.sweeps(), 0, int64(limit-1)).Result()
	return ids, queues.Wrap("flows.ListSweeps", err)
}
