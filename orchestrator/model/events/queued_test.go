package events

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// TestQueuedSpecRoundTrip: the spec a job.queued event carries comes back
// whole after the trip through the stream's JSON, idempotency key
// included; an event of an older version, without a spec, says so.
func TestQueuedSpecRoundTrip(t *testing.T) {
	sp := jobs.Spec{Template: "t", Command: []string{"echo", "hi"}, Class: jobs.ClassCore, Rhythm: jobs.RhythmPulse,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second), IdempotencyKey: "k1", Params: map[string]any{"n": 3}}
	body, err := sp.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	e := Event{ID: "x", Type: TypeJobQueued, JobID: "j", Time: time.Now(), Data: map[string]any{DataSpec: json.RawMessage(body)}}
	b, err := e.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := QueuedSpec(d)
	if err != nil || !ok || got.IdempotencyKey != "k1" || len(got.Command) != 2 || got.Command[1] != "hi" || got.Timeout != sp.Timeout {
		t.Fatalf("spec back %+v ok %v err %v from %s", got, ok, err, b)
	}
	old := Event{ID: "y", Type: TypeJobQueued, JobID: "j", Time: time.Now(), Data: map[string]any{"template": "t"}}
	if _, ok, err := QueuedSpec(old); ok || err != nil {
		t.Fatalf("an event without a spec: ok %v err %v, want not ok and no error", ok, err)
	}
}
