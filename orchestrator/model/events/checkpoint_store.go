package events

import (
	"time"
)

// Events of checkpoints that travel through a store (config checkpoints).
// A commit is announced as TypeJobCheckpoint, as a checkpoint recorded
// without a store is, with the upload's figures added; the others are new.
const (
	// TypeJobCheckpointRestored: a worker put a committed checkpoint in
	// place before the attempt started.
	TypeJobCheckpointRestored Type = "job.checkpoint_restored"
	// TypeJobCheckpointRefused: a commit was refused because the attempt
	// had moved on (or its sequence did not grow); the checkpoint it
	// uploaded is never restored.
	TypeJobCheckpointRefused Type = "job.checkpoint_refused"
	// TypeJobCheckpointFallback: the next attempt resumes from an older
	// checkpoint than the job last reported (see the Fallback* causes).
	TypeJobCheckpointFallback Type = "job.checkpoint_fallback"
)

// Causes of a TypeJobCheckpointFallback.
const (
	// FallbackCorrupt: a committed checkpoint could not be rebuilt whole
	// (a missing or corrupt chunk or manifest); the restore moved on to
	// the one before.
	FallbackCorrupt = "corrupt"
	// FallbackUnfinished: the job's last checkpoint did not finish
	// uploading in its grace; nothing of it was committed.
	FallbackUnfinished = "unfinished"
	// FallbackNone: no committed checkpoint could be rebuilt; the attempt
	// starts afresh, with no BALLAST_RESUME_FROM.
	FallbackNone = "none"
)

// The Data keys of the checkpoint events, written and read here only.
const (
	ckToken    = "checkpoint"
	ckManifest = "manifest"
	ckSize     = "size_bytes"
	ckBytes    = "bytes"
	ckSeconds  = "seconds"
	ckFiles    = "files"
	ckReused   = "reused_files"
	ckCause    = "cause"
	ckFrom     = "resume_from"
)

// CheckpointTransfer is what a commit or a restore event says: which
// checkpoint (its token and manifest), how large it is, how many bytes
// went over the wire and how long that took.
type CheckpointTransfer struct {
	JobID   string
	Attempt int
	Worker  string
	Token   string
	// Manifest is the store key of the checkpoint's manifest.
	Manifest string
	// Size is the checkpoint's size: the sum of its files.
	Size int64
	// Bytes went to the store (a commit) or came from it (a restore);
	// chunks already there, or files a restore found in place, count
	// nothing.
	Bytes    int64
	Duration time.Duration
	Files    int
	// Reused counts files a restore found in place (the same machine).
	Reused int
	Time   time.Time
}

// CommitEvent renders t as the job.checkpoint event of a commit.
func (t CheckpointTransfer) CommitEvent() Event {
	return t.event(TypeJobCheckpoint, NewID())
}

// RestoreEvent renders t as a job.checkpoint_restored event; one per
// attempt, so a retried publication is stored once.
func (t CheckpointTransfer) RestoreEvent() Event {
	return t.event(TypeJobCheckpointRestored, JobEventID(t.JobID, t.Attempt, TypeJobCheckpointRestored))
}

func (t CheckpointTransfer) event(typ Type, id string) Event {
	return Event{ID: id, Type: typ, JobID: t.JobID, Attempt: t.Attempt, Worker: t.Worker, Time: t.Time,
		Data: map[string]any{ckToken: t.Token, ckManifest: t.Manifest, ckSize: t.Size, ckBytes: t.Bytes,
			ckSeconds: t.Duration.Seconds(), ckFiles: t.Files, ckReused: t.Reused}}
}

// ParseCheckpointTransfer reads a commit (a job.checkpoint event that
// names a manifest) or a restore event back; false for any other event.
// It accepts the event as decoded from JSON (numbers as float64).
func ParseCheckpointTransfer(e Event) (CheckpointTransfer, bool) {
	manifest, _ := e.Data[ckManifest].(string)
	if (e.Type != TypeJobCheckpoint || manifest == "") && e.Type != TypeJobCheckpointRestored {
		return CheckpointTransfer{}, false
	}
	token, _ := e.Data[ckToken].(string)
	secs := number(e.Data[ckSeconds])
	return CheckpointTransfer{JobID: e.JobID, Attempt: e.Attempt, Worker: e.Worker, Token: token, Manifest: manifest,
		Size: int64(number(e.Data[ckSize])), Bytes: int64(number(e.Data[ckBytes])),
		Duration: time.Duration(secs * float64(time.Second)), Files: int(number(e.Data[ckFiles])),
		Reused: int(number(e.Data[ckReused])), Time: e.Time}, true
}

// CheckpointSetback is what a refusal or a fallback event says: the
// checkpoint that will not be resumed from, why, and which token the next
// attempt gets instead ("" for none).
type CheckpointSetback struct {
	JobID   string
	Attempt int
	Worker  string
	// Cause is one of the Fallback* causes (fallbacks only).
	Cause string
	// Token and Manifest name the checkpoint passed over (Manifest is
	// empty for an upload that never wrote one).
	Token    string
	Manifest string
	// ResumeFrom is the token the next attempt resumes from instead.
	ResumeFrom string
	Reason     string
	Time       time.Time
}

// RefusedEvent renders s as a job.checkpoint_refused event.
func (s CheckpointSetback) RefusedEvent() Event { return s.event(TypeJobCheckpointRefused) }

// FallbackEvent renders s as a job.checkpoint_fallback event.
func (s CheckpointSetback) FallbackEvent() Event { return s.event(TypeJobCheckpointFallback) }

func (s CheckpointSetback) event(typ Type) Event {
	return Event{ID: NewID(), Type: typ, JobID: s.JobID, Attempt: s.Attempt, Worker: s.Worker, Reason: s.Reason, Time: s.Time,
		Data: map[string]any{ckCause: s.Cause, ckToken: s.Token, ckManifest: s.Manifest, ckFrom: s.ResumeFrom}}
}

// ParseCheckpointSetback reads a refusal or a fallback event back; false
// for any other event.
func ParseCheckpointSetback(e Event) (CheckpointSetback, bool) {
	if e.Type != TypeJobCheckpointRefused && e.Type != TypeJobCheckpointFallback {
		return CheckpointSetback{}, false
	}
	s := CheckpointSetback{JobID: e.JobID, Attempt: e.Attempt, Worker: e.Worker, Reason: e.Reason, Time: e.Time}
	s.Cause, _ = e.Data[ckCause].(string)
	s.Token, _ = e.Data[ckToken].(string)
	s.Manifest, _ = e.Data[ckManifest].(string)
	s.ResumeFrom, _ = e.Data[ckFrom].(string)
	return s, true
}

// number reads a number from event data, as built (int, int64, float64)
// or as decoded from JSON (float64).
func number(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case int:
		return float64(n)
	case int64:
		return float64(n)
	}
	return 0
}
