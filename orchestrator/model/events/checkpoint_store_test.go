package events

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// roundTrip sends e through JSON, as the stream does.
func roundTrip(t *testing.T, e Event) Event {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

func TestCheckpointTransferRoundTrip(t *testing.T) {
	at := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	want := CheckpointTransfer{JobID: "j1", Attempt: 3, Worker: "w", Token: "step-7", Manifest: "jobs/j1/manifests/m.json",
		Size: 1 << 30, Bytes: 128 << 20, Duration: 1500 * time.Millisecond, Files: 108, Reused: 2, Time: at}
	for _, e := range []Event{want.CommitEvent(), want.RestoreEvent()} {
		got, ok := ParseCheckpointTransfer(roundTrip(t, e))
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v %v, want %+v", e.Type, got, ok, want)
		}
	}
	again := want
	again.Time = at.Add(time.Minute) // a retried publication, later
	if want.RestoreEvent().ID != again.RestoreEvent().ID || want.CommitEvent().ID == again.CommitEvent().ID {
		t.Error("a restore's event ID is not derived from the attempt, or a commit's is")
	}
	// A checkpoint recorded without a store names no manifest.
	plain := Event{Type: TypeJobCheckpoint, JobID: "j1", Data: map[string]any{"checkpoint": "x"}}
	if _, ok := ParseCheckpointTransfer(plain); ok {
		t.Error("a plain checkpoint event parsed as a commit")
	}
}

func TestCheckpointSetbackRoundTrip(t *testing.T) {
	want := CheckpointSetback{JobID: "j1", Attempt: 2, Worker: "w", Cause: FallbackCorrupt, Token: "new",
		Manifest: "k", ResumeFrom: "old", Reason: "chunk missing", Time: time.Unix(100, 0).UTC()}
	for _, e := range []Event{want.RefusedEvent(), want.FallbackEvent()} {
		got, ok := ParseCheckpointSetback(roundTrip(t, e))
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v %v, want %+v", e.Type, got, ok, want)
		}
	}
	if _, ok := ParseCheckpointSetback(Event{Type: TypeJobFailed}); ok {
		t.Error("a job.failed event parsed as a setback")
	}
}
