package intake

import (
	"bytes"
	"encoding/json"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func benchBatchResult() BatchResult {
	return BatchResult{Receipt: &Receipt{JobID: "01HZX7K3M9Q2W5E8R1T4Y6U0JB", Attempt: 1, State: jobs.StateQueued, Queue: "burst"}}
}

// BenchmarkJSONLibraryEncodeBatchResult sets appendJSON beside the JSON
// library writing the same bytes (encoding/json's, with its v1 options):
// the hand encoder stays while it is the faster.
func BenchmarkJSONLibraryEncodeBatchResult(b *testing.B) {
	r := benchBatchResult()
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = r.appendJSON(make([]byte, 0, 128))
		}
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		opts := jsonv1.DefaultOptionsV1()
		for b.Loop() {
			_, _ = jsonv2.Marshal(r, opts)
		}
	})
}

// TestLibraryEncodesBatchResultAsEncodingJSON: the benchmark compares like
// with like.
func TestLibraryEncodesBatchResultAsEncodingJSON(t *testing.T) {
	want, _ := json.Marshal(benchBatchResult())
	got, err := jsonv2.Marshal(benchBatchResult(), jsonv1.DefaultOptionsV1())
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the library writes %s (%v), encoding/json %s", got, err, want)
	}
}
