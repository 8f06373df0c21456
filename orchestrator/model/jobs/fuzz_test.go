package jobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// FuzzDecodeSubmission: no input panics; a refused one names the field at
// fault; an accepted one re-encodes to a body that decodes to the same
// submission (and encodes to the same bytes again). Resolving it against a
// catalog neither panics nor returns an unnamed problem.
func FuzzDecodeSubmission(f *testing.F) {
	for _, seed := range []string{
		`{"template":"train","params":{"lr":0.01,"epochs":20},"idempotency_key":"nightly-2026-11-29","team":"ml","labels":{"exp":"a"},"class":"burst","timeout":"6h"}`,
		`{"command":["echo","hi"]}`,
		`{"template":"train","params":{"name":"a\u0000b"}}`,
		`{"template":"train","team":"a","team":"b"}`,
		`{"template":"t","Template":"u"}`,
		`{"template":"t","params":{"x":{"y":[1,{"z":null}]}}}`,
		`{"template":"t","timeout":-1}`,
		`[]`, `null`, `{}`, ``, `{"template":"t"} {}`,
	} {
		f.Add([]byte(seed))
	}
	cat := fuzzCatalog(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeSubmission(data)
		if err != nil {
			requireNamed(t, err)
			return
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("an accepted submission does not encode: %v", err)
		}
		s2, err := DecodeSubmission(b)
		if err != nil {
			t.Fatalf("the re-encoded submission %s is refused: %v", b, err)
		}
		if b2, _ := json.Marshal(s2); !bytes.Equal(b, b2) {
			t.Fatalf("encodings differ:\n%s\n%s", b, b2)
		}
		if !sameSubmission(s, s2) {
			t.Fatalf("decoded %+v, after a round trip %+v", s, s2)
		}
		if _, err := cat.Resolve(s); err != nil {
			requireNamed(t, err)
		}
	})
}

func fuzzCatalog(f *testing.F) *Catalog {
	cat, err := NewCatalog(map[string]Template{
		"train": {Command: []string{"train", "--lr=${lr}", "${name}"}, Env: map[string]string{"EPOCHS": "${epochs}"},
			Params: map[string]ParamSpec{
				"lr":     {Type: ParamFloat, Min: ptr(0.0), Max: ptr(1.0), Default: 0.01},
				"epochs": {Type: ParamInt, Min: ptr(1.0), Required: true},
				"name":   {Type: ParamString, MaxLen: 64},
				"mode":   {Type: ParamEnum, Values: []string{"a", "b"}},
				"dry":    {Type: ParamBool},
			}},
	})
	if err != nil {
		f.Fatal(err)
	}
	cat.AllowRaw = true
	return cat
}

// requireNamed fails unless err is a *ValidationError whose every problem
// names a field.
func requireNamed(t *testing.T, err error) {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) == 0 {
		t.Fatalf("error %v (%T) is not a *ValidationError with problems", err, err)
	}
	for _, p := range ve.Problems {
		if p.Field == "" || p.Message == "" {
			t.Fatalf("problem %+v names no field or says nothing", p)
		}
	}
}

// sameSubmission compares two submissions, parameters by their decoded
// value: encoding compacts raw JSON and escapes HTML characters. An empty
// map or list is the same as none (omitempty drops it).
func sameSubmission(a, b Submission) bool {
	pa, pb := a.Params, b.Params
	a.Params, b.Params = nil, nil
	for _, s := range []*Submission{&a, &b} {
		if len(s.Labels) == 0 {
			s.Labels = nil
		}
		if len(s.Command) == 0 {
			s.Command = nil
		}
	}
	if !reflect.DeepEqual(a, b) || len(pa) != len(pb) {
		return false
	}
	for k, va := range pa {
		var x, y any
		if json.Unmarshal(va, &x) != nil || json.Unmarshal(pb[k], &y) != nil || !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// FuzzDecodeBatch: no input panics; a refused batch names the field at
// fault (its index for one job's problem); an accepted one holds between
// one and MaxBatchJobs submissions, each of which decodes on its own to the
// same submission.
func FuzzDecodeBatch(f *testing.F) {
	for _, seed := range []string{
		`[{"template":"train","params":{"lr":0.01,"epochs":20},"idempotency_key":"k1"},{"template":"train","params":{"epochs":1}}]`,
		`[]`, `[1]`, `[{}]`, `[{"template":"t","template":"u"}]`, `[{"template":"t"}] [1]`, `[{"template":"t"}`, ` [null]`,
		`[{"template":"t","params":{"x":"a\u0000b"}}]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		subs, err := DecodeBatch(data)
		if err != nil {
			requireNamed(t, err)
			return
		}
		if len(subs) == 0 || len(subs) > MaxBatchJobs {
			t.Fatalf("accepted a batch of %d jobs", len(subs))
		}
		for i, s := range subs {
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatalf("job %d does not encode: %v", i, err)
			}
			s2, err := DecodeSubmission(b)
			if err != nil || !sameSubmission(s, s2) {
				t.Fatalf("job %d re-decodes as %+v (%v), want %+v", i, s2, err, s)
			}
		}
	})
}

// FuzzQuickSubmissionIsStrict: whatever the hand reader takes, the JSON
// library's strict decoding takes too and reads the same.
func FuzzQuickSubmissionIsStrict(f *testing.F) {
	for _, seed := range []string{
		`{"template":"train","params":{"lr":0.01,"epochs":20},"idempotency_key":"k","team":"ml","labels":{"exp":"a"},"class":"burst","timeout":"6h","slots":2,"command":["a"]}`,
		`{"template":"t","Template":"u"}`, `{"TEMPLATE":"t"}`, `{"template":"t","bogus":1}`, `{"template":"t"} {}`,
		`{"template":"t","params":{"a":1,"a":2}}`, `{"timeout":"x"}`, `{"slots":"2"}`, `[]`, `null`, `{"params":{"é":1}}`,
		// The hand-read form, and its edges.
		`{"template":"train","params":{"lr":0.01,"n":-2e+3,"s":"x","on":true,"off":false,"z":null},"idempotency_key":"k-1","team":"ml","class":"burst","timeout":"6h"}`,
		` { "template" : "t" , "params" : { } } `, `{}`, `{"params":{"a":01}}`, `{"params":{"a":1.}}`, `{"params":{"a":-}}`, `{"params":{"a":[1]}}`,
		`{"template":"t\u0041"}`, `{"template":"ÿ"}`, `{"team":"a","team":"b"}`, `{"params":null}`, `{"timeout":"6x"}`, `{"timeout":null}`,
		`{"template":"t",}`, `{"template":"t"}x`, `{"params":{"a":1,}}`, `{"params":{"a":tru}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		quick, ok := decodeSubmissionHand(data)
		if !ok {
			return
		}
		strict, err := decodeSubmissionStrict(data)
		if err != nil {
			t.Fatalf("%q: the hand reader takes it, the strict decoding refuses it: %v", data, err)
		}
		if !reflect.DeepEqual(quick, strict) {
			t.Fatalf("%q: quick reads %+v, strict %+v", data, quick, strict)
		}
	})
}

// TestQuickSubmissionTakesTheCommonForm: a submission as clients send it
// takes the hand reader (else it saves nothing), and one with an unknown,
// folded or repeated key does not.
func TestQuickSubmissionTakesTheCommonForm(t *testing.T) {
	if _, ok := decodeSubmissionHand([]byte(`{"template":"train","params":{"lr":0.01},"idempotency_key":"k-1","team":"ml","timeout":"6h"}`)); !ok {
		t.Fatal("a plain submission is not read by hand")
	}
	// And a sweep's trial, as the Go client encodes it.
	sub := Submission{Template: "train", Params: map[string]json.RawMessage{"lr": json.RawMessage("0.01"), "opt": json.RawMessage(`"adam"`)},
		IdempotencyKey: "sweep-1-7", Team: "ml", Class: "burst"}
	enc, _ := json.Marshal(sub)
	if got, ok := decodeSubmissionHand(enc); !ok || !reflect.DeepEqual(got, sub) {
		t.Fatalf("%s: read by hand as %+v (%v), want %+v", enc, got, ok, sub)
	}
	for _, in := range []string{`{"template":"t","bogus":1}`, `{"Template":"t"}`, `{"template":"t","team":"a","team":"b"}`, `{"template":"t"} {}`} {
		if _, ok := decodeSubmissionHand([]byte(in)); ok {
			t.Fatalf("%s is read by hand", in)
		}
	}
}

// BenchmarkDecodeSubmission decodes a sweep trial's submission as the
// intake does, once per job of a batch.
func BenchmarkDecodeSubmission(b *testing.B) {
	data := []byte(`{"template":"train","params":{"lr":0.01,"opt":"adam"},"idempotency_key":"sweep-1-7","team":"ml","class":"burst"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeSubmission(data); err != nil {
			b.Fatal(err)
		}
	}
}
