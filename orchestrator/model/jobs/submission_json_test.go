package jobs

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestSubmissionJSONIsWhatEncodingJSONWrites: AppendJSON gives the bytes
// and the errors json.Marshal gives, over random submissions with every
// field set or not, and params encoding/json copies, rewrites or refuses.
// The field count fails when Submission grows, until AppendJSON writes
// the new field.
func TestSubmissionJSONIsWhatEncodingJSONWrites(t *testing.T) {
	if n := reflect.TypeFor[Submission]().NumField(); n != 10 {
		t.Fatalf("Submission has %d fields; AppendJSON writes 10: teach it the new ones, then change this count", n)
	}
	strs := []string{"", "train", `a"b\c`, "<x>&", "line\nbreak", "é日本", "\u2028", "bad\xff"}
	raws := []string{"0.01", "-2e+3", "0", `"adam"`, "true", "false", "null", `"<b>"`, `"é"`, `"a\"b"`, ` 1`, `1 `, "[1, 2]", `{"a":1}`,
		`"\u2028"`, "01", "", "nope", `"open`, "1.", `{"a": [true]}`}
	r := rand.New(rand.NewPCG(5, 6))
	pick := func() string { return strs[r.IntN(len(strs))] }
	some := func() bool { return r.IntN(2) == 0 }
	for i := range 5000 {
		s := Submission{Template: pick(), IdempotencyKey: pick(), Team: pick(), Class: pick()}
		if some() {
			s.Params = map[string]json.RawMessage{}
			for range r.IntN(4) {
				// Mostly plain, as clients send them.
				raw := raws[r.IntN(7)]
				if r.IntN(4) == 0 {
					raw = raws[r.IntN(len(raws))]
				}
				s.Params[pick()] = json.RawMessage(raw)
			}
			if r.IntN(10) == 0 {
				s.Params["nil"] = nil
			}
		}
		if some() {
			s.Labels = map[string]string{pick(): pick(), pick(): pick()}
		}
		if some() {
			d := Duration(r.Int64N(1e13))
			s.Timeout = &d
		}
		if some() {
			s.Command = []string{pick(), pick()}[:r.IntN(3)]
		}
		if some() {
			n := r.IntN(9) - 1
			s.Slots = &n
		}
		if some() {
			x := float64(r.IntN(1200)) / 1000
			s.GPUShare = &x
		}
		want, werr := json.Marshal(s)
		got, err := s.AppendJSON([]byte("x"))
		if (werr == nil) != (err == nil) || (err == nil && string(got) != "x"+string(want)) {
			t.Fatalf("submission %d: AppendJSON gives\n%s (%v)\nencoding/json gives\n%s (%v)", i, got, err, want, werr)
		}
	}
}
