package jobs

import (
	"encoding/json"

	"github.com/ballastdev/ballast/internal/jsonenc"
)

// AppendJSON appends json.Marshal(s) to b, the same bytes, without
// reflection: a client encodes every job of a batch
// (TestSubmissionJSONIsWhatEncodingJSONWrites holds it to encoding/json).
// A param whose JSON text encoding/json would rewrite (space in it, a
// character it escapes, a nested value) or refuse sends the whole
// submission to json.Marshal, so its bytes and its errors are
// encoding/json's. Hand-written JSON, kept because it is faster than the
// JSON library writing the same bytes: BenchmarkJSONLibraryEncodeSubmission.
func (s Submission) AppendJSON(b []byte) ([]byte, error) {
	for _, raw := range s.Params {
		if !plainScalar(raw) {
			out, err := json.Marshal(s)
			return append(b, out...), err
		}
	}
	o := jsonenc.Open(b)
	o.OmitEmpty("template", s.Template)
	o.RawMap("params", s.Params)
	o.OmitEmpty("idempotency_key", s.IdempotencyKey)
	o.OmitEmpty("team", s.Team)
	o.StringMap("labels", s.Labels)
	o.OmitEmpty("class", s.Class)
	if s.Timeout != nil {
		o.String("timeout", s.Timeout.String())
	}
	o.Strings("command", s.Command)
	if s.Slots != nil {
		o.Int("slots", int64(*s.Slots))
	}
	if s.GPUShare != nil {
		o.Float("gpu_share", *s.GPUShare, false)
	}
	return o.Close()
}

// plainScalar reports whether raw is a number, true, false, null or a
// string of printable ASCII without escapes or the characters
// encoding/json escapes for HTML: such text it copies as it is.
func plainScalar(raw json.RawMessage) bool {
	p := handScan{data: raw}
	text, ok := p.scalar()
	if !ok || len(text) != len(raw) {
		return false
	}
	for _, c := range text {
		if c >= 0x80 || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
