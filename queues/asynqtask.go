package queues

import (
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// The submit script creates a new job's first asynq task itself, in the
// same script that writes the record: one round trip instead of two, and no
// window in which the record exists without its task (so no outbox entry
// to write, and none for the claim to remove). That means writing the task
// as asynq stores it, which asynq does not export: a hash at
// asynq:{QUEUE}:t:ID with the encoded TaskMessage under "msg", "state"
// pending and "pending_since" in Unix nanoseconds, the ID pushed on
// asynq:{QUEUE}:pending, and the queue named in asynq:queues. The layout
// is asynq v0.26's; TestSubmittedTaskIsAsynqs reads such a task back with
// asynq's own Inspector and runs it with asynq's own server, so an
// upgrade that changes the layout fails that test rather than jobs.

// asynqAllQueues is the set asynq lists queues from.
const asynqAllQueues = "asynq:queues"

func asynqPendingKey(qname string) string { return "asynq:{" + qname + "}:pending" }

// asynqActiveKey is the list of task IDs asynq has handed to a consumer
// and not yet seen done. TestLeaderMovesOnADeliveryTakenButNeverClaimed
// (controller) reads it under a real asynq server.
func asynqActiveKey(qname string) string { return "asynq:{" + qname + "}:active" }

// Field numbers of asynq's TaskMessage (its internal/proto/asynq.proto).
const (
	tmType    protowire.Number = 1
	tmPayload protowire.Number = 2
	tmID      protowire.Number = 3
	tmQueue   protowire.Number = 4
	tmRetry   protowire.Number = 5
	tmTimeout protowire.Number = 8
)

// appendAsynqMessage appends the TaskMessage asynq.Client would store for
// j's current attempt, whose task ID (TaskID) the caller has, with the
// options of Store.enqueue: task ID, queue, MaxRetry(infraRetries),
// Timeout(timeout+grace+slack) in whole seconds, no deadline (asynq
// stores 0), no retention, no unique key or group. Zero fields are left
// out, as proto3 does.
func appendAsynqMessage(b []byte, qname string, j *jobs.Job, taskID string) []byte {
	timeout := int64((j.Spec.Timeout.Std() + j.Spec.Grace.Std() + timeoutSlack) / time.Second)
	b = protowire.AppendTag(b, tmType, protowire.BytesType)
	b = protowire.AppendString(b, TaskType)
	b = protowire.AppendTag(b, tmPayload, protowire.BytesType)
	b = protowire.AppendBytes(b, Delivery{JobID: j.ID, Attempt: j.Attempt}.Encode())
	b = protowire.AppendTag(b, tmID, protowire.BytesType)
	b = protowire.AppendString(b, taskID)
	b = protowire.AppendTag(b, tmQueue, protowire.BytesType)
	b = protowire.AppendString(b, qname)
	b = protowire.AppendTag(b, tmRetry, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(infraRetries))
	if timeout != 0 {
		b = protowire.AppendTag(b, tmTimeout, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(timeout))
	}
	return b
}

// inlineTask is what the submit script needs to create j's first task:
// its two keys, its message and its ID. Its pending_since is the call's
// time, which the script takes once for a whole group.
type inlineTask struct {
	key, pending string
	msg          []byte
	id           string
}

func newInlineTask(names *asynqNames, j *jobs.Job) inlineTask {
	id := TaskID(j.ID, j.Attempt)
	return inlineTask{key: names.taskPrefix + id, pending: names.pending, msg: appendAsynqMessage(make([]byte, 0, 128), names.queue, j, id), id: id}
}

// asynqNames are the asynq names of one queue of a store: the queue's, its
// pending list's and its task keys' prefix. A batch makes a task for every
// job, and each of these was a string built anew for each.
type asynqNames struct{ queue, pending, taskPrefix string }

// asynqNamesOf is q's asynqNames, worked out once per store. The cache
// holds one entry per queue the store has submitted to, as published does:
// core, burst and each region a job was pinned to (checkQueue takes only
// well-formed ones).
func (s *Store) asynqNamesOf(q Queue) *asynqNames {
	if v, ok := s.names.Load(q); ok {
		return v.(*asynqNames)
	}
	qname := s.ns.AsynqQueue(q)
	v, _ := s.names.LoadOrStore(q, &asynqNames{queue: qname, pending: asynqPendingKey(qname), taskPrefix: asynqTaskPrefix(qname)})
	return v.(*asynqNames)
}

func asynqTaskPrefix(qname string) string   { return "asynq:{" + qname + "}:t:" }
func asynqPausedKey(qname string) string    { return "asynq:{" + qname + "}:paused" }
func asynqScheduledKey(qname string) string { return "asynq:{" + qname + "}:scheduled" }
func asynqRetryKey(qname string) string     { return "asynq:{" + qname + "}:retry" }
