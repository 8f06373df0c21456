package jobs

import (
	"testing"
)

func TestDecodeSubmissionRefusesDuplicateKeys(t *testing.T) {
	cases := []struct {
		name, body, field string
	}{
		{"top level", `{"template":"a","team":"x","team":"y"}`, "team"},
		{"struct field in another case", `{"template":"a","Template":"b"}`, "Template"},
		{"folded like encoding/json does", `{"template":"a","team":"x","teaM":"y"}`, "teaM"},
		{"parameter", `{"template":"a","params":{"lr":0.1,"epochs":2,"lr":0.2}}`, "params.lr"},
		{"label", `{"template":"a","labels":{"exp":"a","exp":"b"}}`, "labels.exp"},
		{"inside a parameter's value", `{"template":"a","params":{"cfg":{"k":1,"k":2}}}`, "params.cfg.k"},
		{"inside an array", `{"template":"a","command":[{"x":1,"x":2}]}`, "command[0].x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeSubmission([]byte(c.body))
			expectProblems(t, err, want{c.field, "appears twice"})
		})
	}
}

func TestDecodeSubmissionMapKeysAreCaseSensitive(t *testing.T) {
	// Label keys "Exp" and "exp" are two labels, not a duplicate.
	s, err := DecodeSubmission([]byte(`{"template":"a","labels":{"Exp":"1","exp":"2"},"params":{"a":1,"A":2}}`))
	if err != nil {
		t.Fatalf("DecodeSubmission: %v", err)
	}
	if len(s.Labels) != 2 || len(s.Params) != 2 {
		t.Errorf("labels %v params %v, want two of each", s.Labels, s.Params)
	}
}

func TestDuplicateKeyLeavesSyntaxErrorsToTheDecoder(t *testing.T) {
	for _, body := range []string{`{"a":`, `{"a" 1}`, `[1,2`, ``, `{"a":1}}`} {
		if fe := DuplicateKey([]byte(body), submissionMaps); fe != nil {
			t.Errorf("DuplicateKey(%q) = %v, want nil", body, fe)
		}
	}
}
