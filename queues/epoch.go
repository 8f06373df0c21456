package queues

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Redis without persistence, a flush, an eviction or a failover to a
// replica that lagged all lose accepted jobs without a trace in what is
// left: nothing in the remaining records can say what used to be there.
// Only a process that looked before can. So the namespace carries an
// epoch, written once and never changed, and every process remembers the
// epoch it saw and the newest job it saw in the index. An epoch that
// vanished or changed, or a remembered job that is gone from the index
// before its retention ran out, is a loss, and the first process to
// notice writes the loss record (DataLoss) into the Redis that now exists,
// where every status reads it until an operator acknowledges it or
// recovery completes.

// Epoch identifies one life of the namespace's data in Redis.
type Epoch struct {
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
}

// IsZero reports whether e names no epoch.
func (e Epoch) IsZero() bool { return e.ID == "" }

// value is the epoch as stored: "ID|ms".
func (e Epoch) value() string { return e.ID + "|" + strconv.FormatInt(e.Created.UnixMilli(), 10) }

// parseEpoch reads a stored epoch; a malformed one is kept whole as its ID
// so that it still compares unequal to every other.
func parseEpoch(v string) Epoch {
	id, ms, ok := strings.Cut(v, "|")
	if !ok {
		return Epoch{ID: v}
	}
	n, _ := strconv.ParseInt(ms, 10, 64)
	return Epoch{ID: id, Created: msUTC(n)}
}

// newEpoch returns a fresh epoch created at now.
func newEpoch(now time.Time) Epoch {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error
	return Epoch{ID: hex.EncodeToString(b[:]), Created: now.UTC().Truncate(time.Millisecond)}
}

// Reasons of a DataLoss.
const (
	// LossGone: the epoch a process saw is missing (Redis restarted
	// empty, or the namespace was flushed).
	LossGone = "epoch_gone"
	// LossChanged: another epoch stands where a process saw one (Redis
	// came back empty and a process wrote a new epoch before this one
	// looked, or the address now leads to another Redis).
	LossChanged = "epoch_changed"
	// LossRolledBack: the epoch is the same but the newest job a process
	// saw is gone before its retention ran out (Redis restored an older
	// snapshot, a replica that lagged took over, or keys were evicted).
	LossRolledBack = "rolled_back"
	// LossBeforeStart: no epoch, but the event stream holds events of
	// jobs: the data went while no process of this namespace watched.
	LossBeforeStart = "gone_before_start"
)

// DataLoss is the record of a detected loss of Redis data.
type DataLoss struct {
	// At is when the loss was noticed.
	At time.Time `json:"at"`
	// LastSeen is when the data was last seen whole by the process that
	// noticed (zero when unknown): the loss happened between the two.
	LastSeen time.Time `json:"last_seen,omitzero"`
	// Reason is one of the Loss* constants; Detail says what was seen.
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
	// OldEpoch is the epoch seen before ("" unknown), NewEpoch the one
	// written after.
	OldEpoch string `json:"old_epoch,omitempty"`
	NewEpoch string `json:"new_epoch,omitempty"`
	// By names the process that noticed.
	By string `json:"detected_by"`
}

// Message says the loss in one sentence, for status lines and logs.
func (l DataLoss) Message() string {
	msg := "Redis lost its data at " + l.At.UTC().Format(time.RFC3339)
	if !l.LastSeen.IsZero() {
		msg += " (last seen whole at " + l.LastSeen.UTC().Format(time.RFC3339) + ")"
	}
	if l.Detail != "" {
		msg += ": " + l.Detail
	}
	return msg
}

// Fix says what an operator does about a loss.
const LossFix = "run `ballast recover` to rebuild the accepted jobs from the event stream (or `ballast recover --ack` to acknowledge without rebuilding); " +
	"keep Redis durable: appendonly yes, appendfsync everysec, maxmemory-policy noeviction"

func (l DataLoss) fields() []any {
	return []any{"at", l.At.UnixMilli(), "last_seen", l.LastSeen.UnixMilli(), "reason", l.Reason, "detail", l.Detail,
		"old_epoch", l.OldEpoch, "new_epoch", l.NewEpoch, "by", l.By}
}

func parseDataLoss(h map[string]string) *DataLoss {
	if len(h) == 0 {
		return nil
	}
	ms := func(k string) time.Time {
		n, _ := strconv.ParseInt(h[k], 10, 64)
		return msUTC(n)
	}
	return &DataLoss{At: ms("at"), LastSeen: ms("last_seen"), Reason: h["reason"], Detail: h["detail"],
		OldEpoch: h["old_epoch"], NewEpoch: h["new_epoch"], By: h["by"]}
}

// EpochCheck is what a process remembers and asks CheckEpoch to compare.
type EpochCheck struct {
	// Known is the epoch the process saw before (zero: none yet).
	Known Epoch
	// Newest and NewestAt name the newest job the process saw in the
	// index ("" none): it must still be there unless its retention ran
	// out.
	Newest   string
	NewestAt time.Time
	// LastSeen is when the process last saw the data whole.
	LastSeen time.Time
	// Create writes a new epoch when none is there (controllers do;
	// workers and clients only read, so that a reader never hides a
	// loss from the controllers by writing the new epoch first).
	Create bool
	// Who names the process in a loss record it writes.
	Who string
}

// EpochView is what CheckEpoch found.
type EpochView struct {
	// Epoch is the namespace's epoch now (zero: none, and none created).
	Epoch Epoch
	// Created: this call wrote Epoch. Fresh: it found neither an epoch
	// nor the older start marker (Started), the state of a namespace no
	// controller ever ran in, or of one whose data is gone.
	Created, Fresh bool
	// Loss is the unacknowledged loss record (nil: none); Detected says
	// this call wrote it. Found is the reason (a Loss* constant) when
	// this call's own comparison found a loss, whoever wrote the record:
	// every process that saw the old data learns of its loss once.
	Loss     *DataLoss
	Detected bool
	Found    string
	// Newest and NewestAt name the newest job in the index now.
	Newest   string
	NewestAt time.Time
}

// checkEpochScript compares what a process remembers with what Redis
// holds, writes a missing epoch when asked, and writes the loss record
// once when they differ. One script, so that the epoch written after a
// loss and the record of that loss appear together: no reader can see the
// new epoch and no record.
// KEYS: epoch, lost, since, index, remembered job (the epoch key when none).
// ARGV: known epoch ("" none), create (1/0), new epoch value, now ms,
// last seen ms, who, remembered job ID ("" none), remembered job's
// score, trim cutoff ms.
// Returns {epoch or false, created, fresh, detected, newest ID or false,
// newest score or false, reason this call found or false, lost fields...}.
var checkEpochScript = redis.NewScript(`
local e = redis.call("GET", KEYS[1])
local since = redis.call("EXISTS", KEYS[3]) == 1
local reason, detail = nil, ""
local created, fresh = 0, 0
if not e then
  if not since then fresh = 1 end
  if ARGV[1] ~= "" then reason, detail = "epoch_gone", "the namespace's epoch is gone: Redis restarted empty or was flushed; accepted jobs since its last persistence point are lost" end
  if ARGV[2] == "1" then
    redis.call("SET", KEYS[1], ARGV[3])
    e, created = ARGV[3], 1
  end
elseif ARGV[1] ~= "" and e ~= ARGV[1] then
  reason, detail = "epoch_changed", "the namespace's epoch changed: Redis came back empty or is another server; accepted jobs since its last persistence point are lost"
end
if ARGV[2] == "1" then redis.call("SET", KEYS[3], ARGV[4], "NX") end
if not reason and ARGV[7] ~= "" and e == ARGV[1] and tonumber(ARGV[8]) >= tonumber(ARGV[9]) then
  if not redis.call("ZSCORE", KEYS[4], ARGV[7]) or redis.call("EXISTS", KEYS[5]) == 0 then
    reason, detail = "rolled_back", "job " .. ARGV[7] .. " is gone before its retention ran out: Redis restored an older snapshot, a lagging replica took over, or keys were evicted"
  end
end
local detected = 0
if reason and redis.call("EXISTS", KEYS[2]) == 0 then
  redis.call("HSET", KEYS[2], "at", ARGV[4], "last_seen", ARGV[5], "reason", reason, "detail", detail,
    "old_epoch", ARGV[1], "new_epoch", e or "", "by", ARGV[6])
  detected = 1
end
local newest = redis.call("ZRANGE", KEYS[4], -1, -1, "WITHSCORES")
local out = {e or false, created, fresh, detected, newest[1] or false, newest[2] or false, reason or false}
local lost = redis.call("HGETALL", KEYS[2])
for i = 1, #lost do out[#out + 1] = lost[i] end
return out
`)

// CheckEpoch compares c with what Redis holds now (see EpochCheck).
func (s *Store) CheckEpoch(ctx context.Context, c EpochCheck) (EpochView, error) {
	now := s.opts.Now()
	create := "0"
	if c.Create {
		create = "1"
	}
	known := ""
	if !c.Known.IsZero() {
		known = c.Known.value()
	}
	jobKey := s.ns.Epoch()
	if c.Newest != "" {
		jobKey = s.ns.Job(c.Newest)
	}
	cutoff := now.Add(-s.opts.Retention - jobs.MaxTimeout).UnixMilli()
	res, err := checkEpochScript.Run(ctx, s.rdb, []string{s.ns.Epoch(), s.ns.DataLoss(), s.ns.Started(), s.ns.JobIndex(), jobKey},
		known, create, newEpoch(now).value(), now.UnixMilli(), c.LastSeen.UnixMilli(), c.Who, c.Newest, c.NewestAt.UnixMilli(), cutoff).Slice()
	if err != nil {
		return EpochView{}, wrap("queues.CheckEpoch", err)
	}
	if len(res) < 7 || (len(res)-7)%2 != 0 {
		return EpochView{}, fmt.Errorf("queues.CheckEpoch: unexpected script reply of %d values", len(res))
	}
	var v EpochView
	if e, ok := res[0].(string); ok {
		v.Epoch = parseEpoch(e)
	}
	v.Created, v.Fresh, v.Detected = res[1] == int64(1), res[2] == int64(1), res[3] == int64(1)
	if id, ok := res[4].(string); ok {
		v.Newest = id
		score, _ := res[5].(string)
		ms, _ := strconv.ParseFloat(score, 64)
		v.NewestAt = msUTC(int64(ms))
	}
	h := map[string]string{}
	v.Found, _ = res[6].(string)
	for i := 7; i+1 < len(res); i += 2 {
		k, _ := res[i].(string)
		val, _ := res[i+1].(string)
		h[k] = val
	}
	v.Loss = parseDataLoss(h)
	return v, nil
}

// ReadEpoch returns the namespace's epoch (zero: none) and the
// unacknowledged loss record (nil: none), writing nothing: status and
// submit, which live too briefly to remember an epoch, read what the
// long-lived processes recorded.
func (s *Store) ReadEpoch(ctx context.Context) (Epoch, *DataLoss, error) {
	pipe := s.rdb.Pipeline()
	e := pipe.Get(ctx, s.ns.Epoch())
	h := pipe.HGetAll(ctx, s.ns.DataLoss())
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return Epoch{}, nil, wrap("queues.ReadEpoch", err)
	}
	var ep Epoch
	if v, err := e.Result(); err == nil {
		ep = parseEpoch(v)
	}
	return ep, parseDataLoss(h.Val()), nil
}

// RecordDataLoss writes l as the loss record unless one is there already
// (the first notice stands), and reports whether it wrote it. A process
// that learns of a loss from outside Redis (the event stream) calls it.
func (s *Store) RecordDataLoss(ctx context.Context, l DataLoss) (bool, error) {
	n, err := recordLossScript.Run(ctx, s.rdb, []string{s.ns.DataLoss()}, l.fields()...).Int()
	return n == 1, wrap("queues.RecordDataLoss", err)
}

var recordLossScript = redis.NewScript(`
if redis.call("EXISTS", KEYS[1]) == 1 then return 0 end
redis.call("HSET", KEYS[1], unpack(ARGV))
return 1
`)

// AckDataLoss removes the loss record: an operator acknowledged it, or
// recovery rebuilt what the event stream knew. It returns the record
// removed (nil: there was none).
func (s *Store) AckDataLoss(ctx context.Context) (*DataLoss, error) {
	pipe := s.rdb.TxPipeline()
	h := pipe.HGetAll(ctx, s.ns.DataLoss())
	pipe.Del(ctx, s.ns.DataLoss())
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, wrap("queues.AckDataLoss", err)
	}
	return parseDataLoss(h.Val()), nil
}
