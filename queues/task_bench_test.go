package queues_test

import (
	"bytes"
	"encoding/json"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/ballastdev/ballast/queues"
)

// BenchmarkJSONLibraryEncodeDelivery sets Encode beside the JSON library
// writing the same bytes (encoding/json's, with its v1 options): the hand
// encoder stays while it is the faster.
func BenchmarkJSONLibraryEncodeDelivery(b *testing.B) {
	d := queues.Delivery{JobID: "01HZX7K3M9Q2W5E8R1T4Y6U0JB", Attempt: 2, Slots: 4}
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = d.Encode()
		}
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		opts := jsonv1.DefaultOptionsV1()
		for b.Loop() {
			_, _ = jsonv2.Marshal(d, opts)
		}
	})
}

// TestLibraryEncodesDeliveryAsEncodingJSON: the benchmark compares like
// with like.
func TestLibraryEncodesDeliveryAsEncodingJSON(t *testing.T) {
	d := queues.Delivery{JobID: "01HZX7K3M9Q2W5E8R1T4Y6U0JB", Attempt: 2, Slots: 4}
	want, _ := json.Marshal(d)
	got, err := jsonv2.Marshal(d, jsonv1.DefaultOptionsV1())
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the library writes %s (%v), encoding/json %s", got, err, want)
	}
}
