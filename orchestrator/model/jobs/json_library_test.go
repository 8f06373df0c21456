package jobs

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// The benchmarks here set each hand-written JSON piece this package keeps
// beside the maintained library (github.com/go-json-experiment/json) doing
// the same job with the same strictness, in one run: the hand code stays
// only while it is the faster. Run them as
//
//	go test ./orchestrator/model/jobs -run '^$' -bench 'JSONLibrary' -count 5

// libV1 is how the library writes the bytes encoding/json writes.
var libV1 = jsonv1.DefaultOptionsV1()

const benchSubmission = `{"template":"train","params":{"lr":0.01,"opt":"adam"},"idempotency_key":"sweep-1-7","team":"ml","class":"burst"}`

func BenchmarkJSONLibraryDecodeSubmission(b *testing.B) {
	data := []byte(benchSubmission)
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeSubmission(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var s Submission
			if err := jsonv2.Unmarshal(data, &s, strictJSON); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDecodeLabeledSubmission decodes a submission the hand reader
// leaves to the JSON library: one with labels and a command.
func BenchmarkDecodeLabeledSubmission(b *testing.B) {
	data := []byte(`{"template":"train","params":{"lr":0.01,"opt":"adam"},"labels":{"exp":"a","run":"7"},"command":["python","train.py"],"team":"ml"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeSubmission(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJSONLibraryDuplicateKey(b *testing.B) {
	data := []byte(`{"template":"trial","params":{"lr":0.21,"epochs":10},"idempotency_key":"m-4321","labels":{"exp":"a"}}`)
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if fe, ok := quickDuplicateKey(data, submissionMaps); fe != nil || !ok {
				b.Fatal("not judged")
			}
		}
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if walkDuplicateKeys(data, submissionMaps) != nil {
				b.Fatal("no duplicate here")
			}
		}
	})
}

func benchBatch(n int) []byte {
	var sb strings.Builder
	sb.WriteByte('[')
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(benchSubmission)
	}
	sb.WriteByte(']')
	return []byte(sb.String())
}

func benchEncodedSubmission() Submission {
	d := Duration(6 * time.Hour)
	return Submission{Template: "train", Params: map[string]json.RawMessage{"lr": json.RawMessage("0.01"), "opt": json.RawMessage(`"adam"`)},
		IdempotencyKey: "sweep-1-7", Team: "ml", Class: "burst", Timeout: &d, Labels: map[string]string{"exp": "a"}}
}

func BenchmarkJSONLibraryEncodeSubmission(b *testing.B) {
	s := benchEncodedSubmission()
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = s.AppendJSON(make([]byte, 0, 192))
		}
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = jsonv2.Marshal(s, libV1)
		}
	})
}

func benchSpec() Spec {
	return Spec{Template: "trial", Params: map[string]any{"lr": 0.01, "batch": 64.0, "name": "resnet"}, Command: []string{"python", "train.py", "--lr", "0.01"},
		Class: ClassBurst, Rhythm: RhythmSweep, Retryable: true, MaxRetries: 2, Timeout: Duration(time.Hour), Grace: Duration(30 * time.Second),
		Team: "vision", IdempotencyKey: "k-123456", Env: map[string]string{"LR": "0.01"}}
}

func BenchmarkJSONLibraryEncodeSpec(b *testing.B) {
	s := benchSpec()
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = s.AppendJSON(make([]byte, 0, 512))
		}
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = jsonv2.Marshal(s, libV1)
		}
	})
}

// TestLibraryEncodesAsEncodingJSON: the library with v1 options writes the
// bytes encoding/json writes for the values benchmarked, so the
// benchmarks compare like with like.
func TestLibraryEncodesAsEncodingJSON(t *testing.T) {
	for _, v := range []any{benchEncodedSubmission(), benchSpec()} {
		want, _ := json.Marshal(v)
		got, err := jsonv2.Marshal(v, libV1)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("library writes %s (%v), encoding/json %s", got, err, want)
		}
	}
}
