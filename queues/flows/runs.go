package flows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/pipeline"
	"github.com/ballastdev/ballast/queues"
)

// Trigger says why a pipeline run exists.
type Trigger string

// The triggers of a run.
const (
	// TriggerSchedule: the controller fired it at its scheduled time.
	TriggerSchedule Trigger = "schedule"
	// TriggerCatchUp: its time was missed while no controller ran, and the
	// pipeline's catch-up policy is latest.
	TriggerCatchUp Trigger = "catch-up"
	// TriggerManual: an operator ran `ballast pipelines trigger`.
	TriggerManual Trigger = "manual"
)

// maxRunsPerPipeline bounds each pipeline's run index; older entries are
// dropped when a run is created (their records expire after the retention).
const maxRunsPerPipeline = 1000

// StepRecord is one step of a run: its state and, once started, its job.
type StepRecord struct {
	State pipeline.StepState `json:"state"`
	JobID string             `json:"job_id,omitempty"`
}

// Run is the record of one run of a pipeline. The definition is copied into
// it when the run is created, so a config change mid-run cannot change the
// DAG of a run already going.
type Run struct {
	ID         string                `json:"id"`
	Pipeline   string                `json:"pipeline"`
	Scheduled  time.Time             `json:"scheduled"`
	Trigger    Trigger               `json:"trigger"`
	State      pipeline.RunOutcome   `json:"state"`
	Reason     string                `json:"reason,omitempty"`
	Steps      map[string]StepRecord `json:"steps"`
	Definition pipeline.Pipeline     `json:"definition"`
	CreatedAt  time.Time             `json:"created_at"`
	FinishedAt time.Time             `json:"finished_at,omitempty"`
	// Deadline is when the run's results are due; zero means none.
	Deadline time.Time `json:"deadline,omitempty"`
	// DeadlineMissedAt is when the controller found the run past its
	// deadline (still running, or finished late); zero if it never was.
	DeadlineMissedAt time.Time `json:"deadline_missed_at,omitempty"`
}

// StepStates returns the step states alone, as pipeline.Ready and
// pipeline.RunState take them.
func (r Run) StepStates() map[string]pipeline.StepState {
	out := make(map[string]pipeline.StepState, len(r.Steps))
	for n, s := range r.Steps {
		out[n] = s.State
	}
	return out
}

// NewRun describes a run to create.
type NewRun struct {
	Pipeline   string
	Definition pipeline.Pipeline
	Scheduled  time.Time
	Trigger    Trigger
	// State is RunRunning for a run that starts, or RunSkipped to record a
	// time the overlap policy skipped.
	State  pipeline.RunOutcome
	Reason string
	// Deadline is zero for none.
	Deadline time.Time
	// DedupeKey names this firing (pipeline.DedupeKey); a second CreateRun
	// with the same key returns the first run. Empty for manual triggers,
	// which are each their own run.
	DedupeKey string
	// AdvanceCursor records Scheduled as handled (pipeline.Latest's "after")
	// in the same step, so the time is never considered again.
	AdvanceCursor bool
}

// createRunScript creates a run unless its dedupe key already names one; in
// the same step it indexes the run and advances the pipeline's cursor, so a
// controller that dies right after cannot fire the time again.
// KEYS: fired, run, cursor, pipelineRuns, activeRuns.
// ARGV: id, pipeline, scheduled, now, trigger, state, reason, def, deadline,
// dedupeTTLms, retentionMs, hasDedupe, advanceCursor, maxRuns, steps...
// Returns {"new", id} | {"dup", id}.
var createRunScript = redis.NewScript(`
if ARGV[12] == "1" then
  local ex = redis.call("GET", KEYS[1])
  if ex then return {"dup", ex} end
  redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[10])
end
redis.call("HSET", KEYS[2], "pipeline", ARGV[2], "scheduled", ARGV[3], "created", ARGV[4], "trigger", ARGV[5],
  "state", ARGV[6], "reason", ARGV[7], "def", ARGV[8], "deadline", ARGV[9])
for i = 15, #ARGV do
  redis.call("HSET", KEYS[2], "step:" .. ARGV[i], "pending")
end
if ARGV[6] == "running" then
  redis.call("SADD", KEYS[5], ARGV[1])
else
  redis.call("HSET", KEYS[2], "finished", ARGV[4])
  redis.call("PEXPIRE", KEYS[2], ARGV[11])
end
redis.call("ZADD", KEYS[4], ARGV[3], ARGV[1])
redis.call("ZREMRANGEBYRANK", KEYS[4], 0, -tonumber(ARGV[14]) - 1)
if ARGV[13] == "1" then
  local cur = redis.call("GET", KEYS[3])
  if not cur or tonumber(cur) < tonumber(ARGV[3]) then redis.call("SET", KEYS[3], ARGV[3]) end
end
return {"new", ARGV[1]}
`)

// CreateRun records a new run, or returns the run its dedupe key already
// names (created is then false). Two controllers firing the same time get
// the same run: only the first creates it.
func (s *Store) CreateRun(ctx context.Context, nr NewRun) (run Run, created bool, err error) {
	if nr.State != pipeline.RunRunning && nr.State != pipeline.RunSkipped {
		return Run{}, false, fmt.Errorf("flows.CreateRun: state %q: a new run is running or skipped", nr.State)
	}
	def, err := json.Marshal(nr.Definition)
	if err != nil {
		return Run{}, false, fmt.Errorf("flows.CreateRun: encode definition: %w", err)
	}
	now := s.k.Now()
	id := jobs.NewID(now)
	args := []any{id, nr.Pipeline, nr.Scheduled.UnixMilli(), now.UnixMilli(), string(nr.Trigger), string(nr.State),
		nr.Reason, def, unixMilliOrZero(nr.Deadline), s.k.Retention().Milliseconds(), s.k.Retention().Milliseconds(),
		flag(nr.DedupeKey != ""), flag(nr.AdvanceCursor), maxRunsPerPipeline}
	if nr.State == pipeline.RunRunning {
		for _, name := range sortedStepNames(nr.Definition) {
			args = append(args, name)
		}
	}
	res, err := createRunScript.Run(ctx, s.rdb, []string{s.fired(nr.DedupeKey), s.run(id),
		s.pipelineCursor(nr.Pipeline), s.pipelineRuns(nr.Pipeline), s.activeRuns()}, args...).StringSlice()
	if err != nil {
		return Run{}, false, queues.Wrap("flows.CreateRun", err)
	}
	run, err = s.GetRun(ctx, res[1])
	return run, res[0] == "new", err
}

// HandledUntil returns the latest scheduled time of pipeline the controller
// has handled (fired or deliberately skipped); zero if none ever was.
func (s *Store) HandledUntil(ctx context.Context, pipelineName string) (time.Time, error) {
	v, err := s.rdb.Get(ctx, s.pipelineCursor(pipelineName)).Result()
	if errors.Is(err, redis.Nil) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, queues.Wrap("flows.HandledUntil", err)
	}
	return queues.FieldTime(v), nil
}

// advanceCursorScript moves a pipeline's cursor forward, never back.
// KEYS: cursor. ARGV: scheduled ms.
var advanceCursorScript = redis.NewScript(`
local cur = redis.call("GET", KEYS[1])
if cur and tonumber(cur) >= tonumber(ARGV[1]) then return 0 end
redis.call("SET", KEYS[1], ARGV[1])
return 1
`)

// MarkHandled records scheduled as handled without a run: a time missed
// while no controller ran, under the skip catch-up policy. It reports
// whether the cursor moved (false: another controller got there first).
func (s *Store) MarkHandled(ctx context.Context, pipelineName string, scheduled time.Time) (bool, error) {
	n, err := advanceCursorScript.Run(ctx, s.rdb, []string{s.pipelineCursor(pipelineName)}, scheduled.UnixMilli()).Int()
	if err != nil {
		return false, queues.Wrap("flows.MarkHandled", err)
	}
	return n == 1, nil
}

// GetRun returns a run record.
func (s *Store) GetRun(ctx context.Context, id string) (Run, error) {
	h, err := s.rdb.HGetAll(ctx, s.run(id)).Result()
	if err != nil {
		return Run{}, queues.Wrap("flows.GetRun", err)
	}
	if len(h) == 0 {
		return Run{}, fmt.Errorf("flows.GetRun %q: %w (records are kept for the retention period)", id, jobs.ErrNotFound)
	}
	return decodeRun(id, h)
}

func decodeRun(id string, h map[string]string) (Run, error) {
	r := Run{
		ID:               id,
		Pipeline:         h["pipeline"],
		Scheduled:        queues.FieldTime(h["scheduled"]),
		Trigger:          Trigger(h["trigger"]),
		State:            pipeline.RunOutcome(h["state"]),
		Reason:           h["reason"],
		CreatedAt:        queues.FieldTime(h["created"]),
		FinishedAt:       queues.FieldTime(h["finished"]),
		Deadline:         queues.FieldTime(h["deadline"]),
		DeadlineMissedAt: queues.FieldTime(h["deadline_missed"]),
		Steps:            map[string]StepRecord{},
	}
	for k, v := range h {
		if name, ok := strings.CutPrefix(k, "step:"); ok {
			st := r.Steps[name]
			st.State = pipeline.StepState(v)
			r.Steps[name] = st
		}
		if name, ok := strings.CutPrefix(k, "job:"); ok {
			st := r.Steps[name]
			st.JobID = v
			r.Steps[name] = st
		}
	}
	if err := json.Unmarshal([]byte(h["def"]), &r.Definition); err != nil {
		return r, fmt.Errorf("flows: run %s has an unreadable definition: %w", id, err)
	}
	return r, nil
}

// ActiveRuns returns the runs that have not ended, oldest scheduled first.
func (s *Store) ActiveRuns(ctx context.Context) ([]Run, error) {
	ids, err := s.rdb.SMembers(ctx, s.activeRuns()).Result()
	if err != nil {
		return nil, queues.Wrap("flows.ActiveRuns", err)
	}
	runs, err := s.getRuns(ctx, ids)
	if err != nil {
		return nil, err
	}
	sort.Slice(runs, func(i, j int) bool {
		if !runs[i].Scheduled.Equal(runs[j].Scheduled) {
			return runs[i].Scheduled.Before(runs[j].Scheduled)
		}
		return runs[i].ID < runs[j].ID
	})
	return runs, nil
}

// ListRuns returns pipeline's most recent runs by scheduled time, newest
// first, at most limit (0 = 50).
func (s *Store) ListRuns(ctx context.Context, pipelineName string, limit int) ([]Run, error) {
	if limit <= 0 {
		limit = 50
	}
	ids, err := s.rdb.ZRevRange(ctx, s.pipelineRuns(pipelineName), 0, int64(limit-1)).Result()
	if err != nil {
		return nil, queues.Wrap("flows.ListRuns", err)
	}
	return s.getRuns(ctx, ids)
}

// getRuns reads runs in one round trip, in the order of ids, leaving out
// those whose record has expired.
func (s *Store) getRuns(ctx context.Context, ids []string) ([]Run, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGetAll(ctx, s.run(id))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, queues.Wrap("flows.getRuns", err)
	}
	out := make([]Run, 0, len(ids))
	for i, c := range cmds {
		if len(c.Val()) == 0 {
			continue
		}
		r, err := decodeRun(ids[i], c.Val())
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// startStepScript records the job of a pending step of a running run.
// KEYS: run. ARGV: step, job. Returns 1 if recorded.
var startStepScript = redis.NewScript(`
if redis.call("HGET", KEYS[1], "state") ~= "running" then return 0 end
if redis.call("HGET", KEYS[1], "step:" .. ARGV[1]) ~= "pending" then return 0 end
redis.call("HSET", KEYS[1], "step:" .. ARGV[1], "running", "job:" .. ARGV[1], ARGV[2])
return 1
`)

// StartStep records that step of run now runs as job. It reports false,
// changing nothing, when the run has ended or the step is not pending.
func (s *Store) StartStep(ctx context.Context, runID, step, jobID string) (bool, error) {
	n, err := startStepScript.Run(ctx, s.rdb, []string{s.run(runID)}, step, jobID).Int()
	if err != nil {
		return false, queues.Wrap("flows.StartStep", err)
	}
	return n == 1, nil
}

// setStepsScript writes step states of a running run.
// KEYS: run. ARGV: step, state, step, state, ... Returns 1 if written.
var setStepsScript = redis.NewScript(`
if redis.call("HGET", KEYS[1], "state") ~= "running" then return 0 end
for i = 1, #ARGV, 2 do
  redis.call("HSET", KEYS[1], "step:" .. ARGV[i], ARGV[i + 1])
end
return 1
`)

// SetStepStates writes the given step states of a running run. It reports
// false, changing nothing, when the run has ended.
func (s *Store) SetStepStates(ctx context.Context, runID string, states map[string]pipeline.StepState) (bool, error) {
	if len(states) == 0 {
		return true, nil
	}
	args := make([]any, 0, 2*len(states))
	for _, name := range slices.Sorted(maps.Keys(states)) {
		args = append(args, name, string(states[name]))
	}
	n, err := setStepsScript.Run(ctx, s.rdb, []string{s.run(runID)}, args...).Int()
	if err != nil {
		return false, queues.Wrap("flows.SetStepStates", err)
	}
	return n == 1, nil
}

// endRunScript ends a running run. Steps still running become cancelled and
// pending ones skipped (only a cancelled run has any); their jobs are
// returned so the caller can cancel them.
// KEYS: run, activeRuns. ARGV: id, state, now, reason, retentionMs.
// Returns {} if the run had already ended, else {"ok", jobs...}.
var endRunScript = redis.NewScript(`
if redis.call("HGET", KEYS[1], "state") ~= "running" then return {} end
redis.call("HSET", KEYS[1], "state", ARGV[2], "finished", ARGV[3])
if ARGV[4] ~= "" then redis.call("HSET", KEYS[1], "reason", ARGV[4]) end
redis.call("SREM", KEYS[2], ARGV[1])
redis.call("PEXPIRE", KEYS[1], ARGV[5])
local out = {"ok"}
local h = redis.call("HGETALL", KEYS[1])
for i = 1, #h, 2 do
  local name = string.match(h[i], "^step:(.*)$")
  if name then
    if h[i + 1] == "running" then
      redis.call("HSET", KEYS[1], h[i], "cancelled")
      local job = redis.call("HGET", KEYS[1], "job:" .. name)
      if job then table.insert(out, job) end
    elseif h[i + 1] == "pending" then
      redis.call("HSET", KEYS[1], h[i], "skipped")
    end
  end
end
return out
`)

// EndRun ends a running run with state (succeeded, failed or cancelled). It
// reports whether this call ended it, and returns the jobs of steps that
// were still running: the caller cancels them.
func (s *Store) EndRun(ctx context.Context, runID string, state pipeline.RunOutcome, reason string) (ended bool, orphans []string, err error) {
	if !state.Terminal() || state == pipeline.RunSkipped {
		return false, nil, fmt.Errorf("flows.EndRun: %q is not an end state of a started run", state)
	}
	res, err := endRunScript.Run(ctx, s.rdb, []string{s.run(runID), s.activeRuns()},
		runID, string(state), s.k.Now().UnixMilli(), reason, s.k.Retention().Milliseconds()).StringSlice()
	if err != nil {
		return false, nil, queues.Wrap("flows.EndRun", err)
	}
	if len(res) == 0 {
		return false, nil, nil
	}
	return true, res[1:], nil
}

// deadlineScript stamps a run as past its deadline, once.
// KEYS: run. ARGV: now. Returns 1 the first time.
var deadlineScript = redis.NewScript(`
if redis.call("EXISTS", KEYS[1]) == 0 then return 0 end
return redis.call("HSETNX", KEYS[1], "deadline_missed", ARGV[1])
`)

// MarkDeadlineMissed records that run missed its deadline. It reports true
// only the first time, so the miss is announced once whichever controller
// notices it.
func (s *Store) MarkDeadlineMissed(ctx context.Context, runID string) (bool, error) {
	n, err := deadlineScript.Run(ctx, s.rdb, []string{s.run(runID)}, s.k.Now().UnixMilli()).Int()
	if err != nil {
		return false, queues.Wrap("flows.MarkDeadlineMissed", err)
	}
	return n == 1, nil
}

func sortedStepNames(p pipeline.Pipeline) []string { return slices.Sorted(maps.Keys(p.Steps)) }

func unixMilliOrZero(t time.Time) string {
	if t.IsZero() {
		return "0"
	}
	return strconv.FormatInt(t.UnixMilli(), 10)
}
