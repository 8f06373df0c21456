package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// FuzzDecodeSpec: no input panics; a refused one names the field at fault;
// an accepted one re-encodes to a body that is accepted too and decodes to
// a spec with the same encoding: nothing of what was accepted is lost or
// changed on the way through Redis and the API. (Raw parameter values are
// compacted and HTML-escaped by encoding, so the encodings, not the
// structs, are compared.)
func FuzzDecodeSpec(f *testing.F) {
	for _, seed := range []string{
		`{"template":"train","space":{"grid":{"lr":[0.1,0.01],"opt":["sgd","adam"]}},"max_parallel":2,"metric":"loss"}`,
		`{"template":"train","space":{"random":{"seed":7,"count":5,"params":{"lr":{"type":"log_uniform","min":1e-4,"max":0.1},"o":{"type":"choice","values":["a","b"]}}}},"goal":"maximize","early_stop":{"min_trials":3,"after_step":1}}`,
		`{"template":"train","space":{"list":[{"lr":0.1},{"lr":0.2,"lr":0.3}]},"fixed":{"epochs":2},"labels":{"a":"b"},"team":"ml","idempotency_key":"k"}`,
		`{"template":"train","space":{"grid":{}},"Space":{}}`,
		`{"space":{"random":{"seed":-1}}}`,
		`{}`, `[]`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeSpec(data)
		if err != nil {
			var ve *jobs.ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) == 0 {
				t.Fatalf("error %v (%T) is not a *jobs.ValidationError with problems", err, err)
			}
			for _, p := range ve.Problems {
				if p.Field == "" || p.Message == "" {
					t.Fatalf("problem %+v names no field or says nothing", p)
				}
			}
			return
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("an accepted spec does not encode: %v", err)
		}
		s2, err := DecodeSpec(b)
		if err != nil {
			t.Fatalf("the re-encoded spec %s is refused: %v", b, err)
		}
		if b2, _ := json.Marshal(s2); !bytes.Equal(b, b2) {
			t.Fatalf("encodings differ:\n%s\n%s", b, b2)
		}
	})
}
