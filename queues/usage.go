package queues

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/redis/go-redis/v9"
)

// What capacity was used, by whom, and for how long is kept apart from the
// job records: records expire with their retention and keep only the last
// attempt, while cost is reported per attempt over weeks. Two structures
// hold it, both trimmed by TrimAccounting:
//
//   - usage, a sorted set of one JSON entry per ended attempt, scored by the
//     attempt's end. The scripts that end an attempt (finish, requeue,
//     recovery of a dead worker) add the entry in the same step, so an
//     attempt is recorded exactly once, when it ends, and never for a
//     delivery the fencing dropped.
//   - lives, a sorted set of worker lives scored by their start, with
//     livesEnd holding each ended life's end. A worker's first heartbeat
//     opens its life; a clean stop or its recovery as dead closes it. The
//     controller records each elastic launch in launches first, so a life
//     starts at the launch (the provider bills the boot), and a launch that
//     never registers is closed as a life of its own (EndLaunch).

// usageLua defines recordUsage(jobKey, usageKey, id, attempt, endMs,
// outcome, lost) for the scripts that end a running attempt. Call it before
// the record changes state: it reads the attempt's start, wait, pool and
// last checkpoint from the record. The wait starts when the attempt could
// first start: a retry's back-off is not a wait for capacity. With lost set, the work since the later
// of the attempt's start and its last checkpoint is counted as thrown away.
const usageLua = `
local usageFields = {"started", "queued", "checkpoint_at", "pool", "worker", "team", "template", "class", "not_before", "tslots"}
local function usageStr(s)
  if not s then return '""' end
  if string.find(s, '[%c"\\\128-\255]') then return cjson.encode(s) end
  return '"' .. s .. '"'
end
local function recordUsageFrom(r, ukey, id, attempt, endms, outcome, lost)
  local start = tonumber(r[1])
  if not start then return end
  local queued = tonumber(r[2]) or start
  local nb = tonumber(r[9])
  if nb and nb > queued and nb <= start then queued = nb end
  local e = tonumber(endms)
  if e < start then e = start end
  local l = 0
  if lost then
    local from = start
    local cp = tonumber(r[3])
    if cp and cp > from then from = cp end
    if e > from then l = e - from end
  end
  -- Written by hand, not by cjson.encode of a table: that costs Redis
  -- twice as much, on every attempt's end. Numbers print as cjson prints
  -- them (both use %.14g), and strings that need escaping go to cjson.
  redis.call("ZADD", ukey, e, '{"job":' .. usageStr(id) .. ',"attempt":' .. (tonumber(attempt) or 0) ..
    ',"queued":' .. queued .. ',"start":' .. start .. ',"end":' .. e .. ',"lost":' .. l ..
    ',"pool":' .. usageStr(r[4]) .. ',"worker":' .. usageStr(r[5]) .. ',"team":' .. usageStr(r[6]) ..
    ',"template":' .. usageStr(r[7]) .. ',"class":' .. usageStr(r[8]) .. ',"outcome":' .. usageStr(outcome) ..
    ',"slots":' .. (tonumber(r[10]) or 1) .. '}')
end
local function recordUsage(key, ukey, id, attempt, endms, outcome, lost)
  recordUsageFrom(redis.call("HMGET", key, unpack(usageFields)), ukey, id, attempt, endms, outcome, lost)
end
`

// AttemptUsage is one attempt of a job on a worker: when it waited, ran and
// ended, where, and how much of its work a preemption threw away.
type AttemptUsage struct {
	JobID    string `json:"job"`
	Attempt  int    `json:"attempt"`
	Team     string `json:"team"`
	Template string `json:"template"`
	Class    string `json:"class"`
	// Pool is the pool of the worker that ran the attempt; empty for an
	// attempt claimed before workers reported their pool.
	Pool   string `json:"pool"`
	Worker string `json:"worker"`
	// Queued is when this attempt could first start: its submission or
	// requeue, or the end of its retry back-off if that came later.
	Queued time.Time `json:"queued"`
	Start  time.Time `json:"start"`
	// End is zero for an attempt still running.
	End time.Time `json:"end,omitzero"`
	// Lost is the work since the last checkpoint that a preemption, a
	// drain or a lost worker threw away.
	Lost time.Duration `json:"lost"`
	// Slots is how many slots the attempt held: every member's of a gang
	// (replicas x slots). 1 for an entry written before slots were
	// recorded.
	Slots int `json:"slots"`
	// Share, when > 0, is the thousandths of one GPU the attempt used
	// (gpu_share) on its one slot: it is billed and counted at that part.
	Share int `json:"share,omitempty"`
	// Outcome is succeeded, failed or cancelled (the job ended), preempted,
	// requeued (drained), retried (failed, to run again) or lost (its
	// worker died); "running" for an attempt still running.
	Outcome string `json:"outcome"`
}

// Wait is how long the attempt waited for a slot.
func (u AttemptUsage) Wait() time.Duration { return u.Start.Sub(u.Queued) }

// usageEntry is an entry as the scripts write it: times in Unix ms.
type usageEntry struct {
	Job      string `json:"job"`
	Attempt  int    `json:"attempt"`
	Queued   int64  `json:"queued"`
	Start    int64  `json:"start"`
	End      int64  `json:"end"`
	Lost     int64  `json:"lost"`
	Pool     string `json:"pool"`
	Worker   string `json:"worker"`
	Team     string `json:"team"`
	Template string `json:"template"`
	Class    string `json:"class"`
	Outcome  string `json:"outcome"`
	Slots    int    `json:"slots"`
}

// usagePage is how many usage entries one read returns: a month of
// records is read in many short calls, so Redis never spends long on one
// reply while workers wait to heartbeat.
var usagePage = int64(5000)

// Usage returns the attempts that ran at some time in [from, until): those
// that ended in it or later and started before until, then the attempts
// running now (End zero) that started before until. Ended attempts come
// oldest end first.
//
// The running attempts are read first: an attempt that ends during the
// read is then found ended, or running (and, ended by then, left out of
// the running ones), never in neither. One found both ways counts ended.
func (s *Store) Usage(ctx context.Context, from, until time.Time) ([]AttemptUsage, error) {
	active, err := s.ActiveJobs(ctx)
	if err != nil {
		return nil, err
	}
	return s.UsageWith(ctx, active, from, until)
}

// UsageWith is Usage for a caller that has just read the active jobs
// itself: active must have been read before this call, which is what makes
// an attempt ending meanwhile impossible to miss.
func (s *Store) UsageWith(ctx context.Context, active []jobs.Job, from, until time.Time) ([]AttemptUsage, error) {
	var out []AttemptUsage
	ended := map[string]bool{}
	min, skip := strconv.FormatInt(from.UnixMilli(), 10), int64(0)
	for {
		page, err := s.rdb.ZRangeByScoreWithScores(ctx, s.ns.usage(), &redis.ZRangeBy{
			Min: min, Max: "+inf", Offset: skip, Count: usagePage}).Result()
		if err != nil {
			return nil, wrap("queues.Usage", err)
		}
		for _, z := range page {
			var e usageEntry
			if json.Unmarshal([]byte(z.Member.(string)), &e) != nil {
				continue // not ours to read; never written by these scripts
			}
			u := AttemptUsage{JobID: e.Job, Attempt: e.Attempt, Team: e.Team, Template: e.Template, Class: e.Class,
				Pool: e.Pool, Worker: e.Worker, Queued: msUTC(e.Queued), Start: msUTC(e.Start), End: msUTC(e.End),
				Lost: time.Duration(e.Lost) * time.Millisecond, Outcome: e.Outcome}
			u.Slots, u.Share = usageSize(e.Slots)
			ended[TaskID(u.JobID, u.Attempt)] = true
			if u.Start.Before(until) && u.End.After(from) {
				out = append(out, u)
			}
		}
		if int64(len(page)) < usagePage {
			break
		}
		// The next page starts at the last score read, past the members
		// of that score already read.
		last := page[len(page)-1].Score
		n := int64(0)
		for i := len(page) - 1; i >= 0 && page[i].Score == last; i-- {
			n++
		}
		if next := strconv.FormatFloat(last, 'f', -1, 64); next == min {
			skip += n
		} else {
			min, skip = next, n
		}
	}
	for _, j := range active {
		if j.State != jobs.StateRunning || j.StartedAt.IsZero() || !j.StartedAt.Before(until) || ended[TaskID(j.ID, j.Attempt)] {
			continue
		}
		out = append(out, RunningUsage(j))
	}
	return out, nil
}

// RunningUsage is the usage of j's running attempt so far.
func RunningUsage(j jobs.Job) AttemptUsage {
	return AttemptUsage{JobID: j.ID, Attempt: j.Attempt, Team: j.Spec.Team, Template: j.Spec.Template,
		Class: string(j.Spec.Class), Pool: j.Pool, Worker: j.Worker, Queued: j.EligibleAt(), Start: j.StartedAt,
		Outcome: "running", Slots: j.Spec.TotalSlots(), Share: j.Spec.ShareMilli()}
}

// usageSlots is what a job record's "tslots" field holds for the scripts
// that write usage entries: the job's total slots, or, for a job with a
// gpu_share, its share in thousandths as a negative number, so the
// scripts copy one number either way (usageSize reads it back).
func usageSlots(spec jobs.Spec) int {
	if m := spec.ShareMilli(); m > 0 {
		return -m
	}
	return spec.TotalSlots()
}

// usageSize reads a usage entry's slots (see usageSlots): at least one
// slot, and the share of a GPU when the number is negative.
func usageSize(n int) (slots, share int) {
	if n < 0 {
		return 1, min(-n, 999)
	}
	return max(n, 1), 0
}

func msUTC(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// WorkerLife is one worker process's life in the registry: from its start
// to its clean stop, or to its last heartbeat when it was found dead.
type WorkerLife struct {
	ID    string    `json:"id"`
	Pool  string    `json:"pool"`
	Slots int       `json:"slots"`
	Start time.Time `json:"start"`
	// End is zero while the worker lives.
	End time.Time `json:"end,omitzero"`
}

// A life's member in lives is "startMs|pool|slots|id" (the scripts build
// it), so the sorted set alone says what each life was. The ID goes last:
// pool names cannot hold "|" (the config refuses them), worker IDs are not
// checked for it. A pending launch is "startMs|pool|slots" under its ID.

func parseLife(m string) (WorkerLife, bool) {
	parts := strings.SplitN(m, "|", 4)
	if len(parts) != 4 {
		return WorkerLife{}, false
	}
	ms, err1 := strconv.ParseInt(parts[0], 10, 64)
	slots, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil {
		return WorkerLife{}, false
	}
	return WorkerLife{ID: parts[3], Pool: parts[1], Slots: slots, Start: msUTC(ms)}, true
}

// WorkerLives returns the worker lives that overlap [from, until), oldest
// start first.
func (s *Store) WorkerLives(ctx context.Context, from, until time.Time) ([]WorkerLife, error) {
	members, err := s.rdb.ZRangeByScore(ctx, s.ns.lives(), &redis.ZRangeBy{
		Min: "-inf", Max: "(" + strconv.FormatInt(until.UnixMilli(), 10)}).Result()
	if err != nil {
		return nil, wrap("queues.WorkerLives", err)
	}
	if len(members) == 0 {
		return nil, nil
	}
	ends, err := s.rdb.HMGet(ctx, s.ns.livesEnd(), members...).Result()
	if err != nil {
		return nil, wrap("queues.WorkerLives", err)
	}
	out := make([]WorkerLife, 0, len(members))
	for i, m := range members {
		l, ok := parseLife(m)
		if !ok {
			continue
		}
		if v, ok := ends[i].(string); ok {
			ms, _ := strconv.ParseInt(v, 10, 64)
			l.End = msUTC(ms)
		}
		if l.End.IsZero() || l.End.After(from) {
			out = append(out, l)
		}
	}
	return out, nil
}

// Launch is an elastic worker the controller asked a provider for.
type Launch struct {
	ID    string
	Pool  string
	Slots int
	// At is when it was asked for: its billing starts no later.
	At time.Time
}

// RecordLaunches notes launches, so that each worker's life starts at its
// launch when it registers. A launch whose worker has registered already is
// skipped: its life is open.
func (s *Store) RecordLaunches(ctx context.Context, ls []Launch) error {
	if len(ls) == 0 {
		return nil
	}
	args := make([]any, 0, 1+2*len(ls))
	args = append(args, s.ns.WorkerPrefix())
	for _, l := range ls {
		args = append(args, l.ID, fmt.Sprintf("%d|%s|%d", l.At.UnixMilli(), l.Pool, l.Slots))
	}
	return wrap("queues.RecordLaunches", recordLaunchesScript.Run(ctx, s.rdb, []string{s.ns.launches()}, args...).Err())
}

// PendingLaunches returns the launches whose worker has not registered yet.
func (s *Store) PendingLaunches(ctx context.Context) ([]Launch, error) {
	m, err := s.rdb.HGetAll(ctx, s.ns.launches()).Result()
	if err != nil {
		return nil, wrap("queues.PendingLaunches", err)
	}
	out := make([]Launch, 0, len(m))
	for id, v := range m {
		if l, ok := parseLife(v + "|" + id); ok {
			out = append(out, Launch{ID: id, Pool: l.Pool, Slots: l.Slots, At: l.Start})
		}
	}
	return out, nil
}

// EndLaunch closes a launch whose worker never registered as a life that
// ended at end. It reports false when the launch was not pending (its
// worker registered, or it was closed already).
func (s *Store) EndLaunch(ctx context.Context, id string, end time.Time) (bool, error) {
	n, err := endLaunchScript.Run(ctx, s.rdb, []string{s.ns.launches(), s.ns.lives(), s.ns.livesEnd()},
		id, end.UnixMilli()).Int()
	return n == 1, wrap("queues.EndLaunch", err)
}

// TrimAccounting closes the lives their workers left open (see
// closeOrphanLives), then drops usage entries of attempts that ended before
// cutoff and the lives that ended before it. The leader calls it with its cost
// retention; lives still running are kept however old. A launch still
// pending at cutoff is closed at its own start, so it is billed its
// minimum: nothing registered, and no controller saw it gone in all that
// time, so how long it lived is not known.
func (s *Store) TrimAccounting(ctx context.Context, cutoff time.Time) error {
	if err := s.closeOrphanLives(ctx); err != nil {
		return err
	}
	ms := strconv.FormatInt(cutoff.UnixMilli(), 10)
	if err := s.rdb.ZRemRangeByScore(ctx, s.ns.usage(), "-inf", "("+ms).Err(); err != nil {
		return wrap("queues.TrimAccounting", err)
	}
	pending, err := s.PendingLaunches(ctx)
	if err != nil {
		return err
	}
	for _, l := range pending {
		if l.At.Before(cutoff) {
			if _, err := s.EndLaunch(ctx, l.ID, l.At); err != nil {
				return err
			}
		}
	}
	old, err := s.rdb.ZRangeByScore(ctx, s.ns.lives(), &redis.ZRangeBy{Min: "-inf", Max: "(" + ms}).Result()
	if err != nil || len(old) == 0 {
		return wrap("queues.TrimAccounting", err)
	}
	ends, err := s.rdb.HMGet(ctx, s.ns.livesEnd(), old...).Result()
	if err != nil {
		return wrap("queues.TrimAccounting", err)
	}
	var gone []string
	for i, m := range old {
		if v, ok := ends[i].(string); ok {
			if end, _ := strconv.ParseInt(v, 10, 64); end < cutoff.UnixMilli() {
				gone = append(gone, m)
			}
		}
	}
	if len(gone) == 0 {
		return nil
	}
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRem(ctx, s.ns.lives(), toAny(gone)...)
		p.HDel(ctx, s.ns.livesEnd(), gone...)
		return nil
	})
	return wrap("queues.TrimAccounting", err)
}

// closeOrphanLives ends, now, the open lives whose worker left the registry
// without closing them (see closeOrphanLivesScript). They are found in Go
// and checked again in the script, so Redis is held only for the few open
// ones.
func (s *Store) closeOrphanLives(ctx context.Context) error {
	all, err := s.rdb.ZRange(ctx, s.ns.lives(), 0, -1).Result()
	if err != nil || len(all) == 0 {
		return wrap("queues.TrimAccounting", err)
	}
	ends, err := s.rdb.HMGet(ctx, s.ns.livesEnd(), all...).Result()
	if err != nil {
		return wrap("queues.TrimAccounting", err)
	}
	args := []any{s.opts.Now().UnixMilli()}
	for i, m := range all {
		if ends[i] == nil {
			args = append(args, m)
		}
	}
	if len(args) == 1 {
		return nil
	}
	return wrap("queues.TrimAccounting", closeOrphanLivesScript.Run(ctx, s.rdb, []string{s.ns.Workers(), s.ns.livesEnd()}, args...).Err())
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
