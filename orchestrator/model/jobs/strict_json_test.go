package jobs

import (
	"encoding/json"
	"testing"
)

// TestStrictDecodingKeepsParamsText: the JSON library hands each param to
// the submission as the text the client sent, as encoding/json did, so a
// job's spec, and the fingerprint an idempotency key is checked against,
// read the same whichever version of the intake decoded it.
func TestStrictDecodingKeepsParamsText(t *testing.T) {
	in := []byte(`{"template":"t","labels":{"a":"b"},"params":{"x":[1, 2 ,{"k" : "\u00e9<"}],"y": 1.50E+1 ,"z":"a\/b","n":null}}`)
	got, err := DecodeSubmission(in)
	if err != nil {
		t.Fatal(err)
	}
	var want Submission
	if err := json.Unmarshal(in, &want); err != nil {
		t.Fatal(err)
	}
	if len(got.Params) != len(want.Params) {
		t.Fatalf("params %s, encoding/json reads %s", got.Params, want.Params)
	}
	for k, w := range want.Params {
		if string(got.Params[k]) != string(w) {
			t.Errorf("param %s is %s, encoding/json reads %s", k, got.Params[k], w)
		}
	}
}
