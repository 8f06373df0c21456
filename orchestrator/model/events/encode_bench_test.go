package events

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// benchEvent is a job's end event as a worker publishes it.
func benchEvent() Event {
	return Event{ID: "01HZX7K3M9Q2W5E8R1T4Y6U0IP", Type: "job.succeeded", JobID: "01HZX7K3M9Q2W5E8R1T4Y6U0JB", Attempt: 1, Runs: 1,
		State: jobs.StateSucceeded, Queue: "burst", Worker: "w-aws-3", Time: time.Date(2026, 12, 6, 21, 0, 0, 123456789, time.UTC),
		Data: map[string]any{"exit_code": 0.0, "duration_s": 12.5, "pool": "aws", "checkpointed": false}}
}

// BenchmarkJSONLibraryEncodeEvent sets AppendJSON beside the JSON library
// writing the same bytes (encoding/json's, with its v1 options): the hand
// encoder stays while it is the faster.
func BenchmarkJSONLibraryEncodeEvent(b *testing.B) {
	e := benchEvent()
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = e.AppendJSON(make([]byte, 0, 320))
		}
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		opts := jsonv1.DefaultOptionsV1()
		for b.Loop() {
			_, _ = jsonv2.Marshal(e, opts)
		}
	})
}

// TestLibraryEncodesEventAsEncodingJSON: the benchmark compares like with
// like.
func TestLibraryEncodesEventAsEncodingJSON(t *testing.T) {
	want, _ := json.Marshal(benchEvent())
	got, err := jsonv2.Marshal(benchEvent(), jsonv1.DefaultOptionsV1())
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the library writes %s (%v), encoding/json %s", got, err, want)
	}
}
