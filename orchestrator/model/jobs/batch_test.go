package jobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestDecodeBatch(t *testing.T) {
	subs, err := DecodeBatch([]byte(` [{"template":"train","params":{"epochs":3}}, {"template":"clean","idempotency_key":"k2"}]`))
	if err != nil || len(subs) != 2 || subs[0].Template != "train" || subs[1].IdempotencyKey != "k2" {
		t.Fatalf("got %+v, %v", subs, err)
	}
	if !IsBatch([]byte("\n [")) || IsBatch([]byte(`{"template":"x"}`)) || IsBatch(nil) {
		t.Fatal("IsBatch tells an array from an object by its first byte")
	}
	for _, c := range []struct{ body, field, msg string }{
		{`[]`, "body", "empty"},
		{`[{"template":"a"},{"templat":"b"}]`, "[1].templat", "unknown field"},
		{`[{"template":"a","template":"b"}]`, "[0].template", "twice"},
		{`[{"template":7}]`, "[0].template", "must be a string"},
		{`[1]`, "[0]", "must be an object"},
		{`[{"template":"a"}] x`, "body", "extra data"},
		{`[{"template":"a"}`, "body", "JSON ends"},
		{`{"template":"a"}`, "body", "array"},
		{"[" + strings.Repeat(`{"template":"a"},`, MaxBatchJobs) + `{"template":"a"}]`, "body", fmt.Sprintf("limit is %d", MaxBatchJobs)},
		{"[" + strings.Repeat(" ", MaxBatchBytes) + "]", "body", "bytes"},
	} {
		_, err := DecodeBatch([]byte(c.body))
		ve, ok := err.(*ValidationError)
		if !ok || len(ve.Problems) == 0 {
			t.Errorf("%.60s: error %v, want a ValidationError", c.body, err)
			continue
		}
		p := ve.Problems[0]
		if p.Field != c.field || !strings.Contains(p.Message, c.msg) {
			t.Errorf("%.60s: %s: %s, want field %s mentioning %q", c.body, p.Field, p.Message, c.field, c.msg)
		}
	}
	// Every bad element is named, not only the first.
	_, err = DecodeBatch([]byte(`[{"templat":"a"},{"template":"ok"},{"tem":"b"}]`))
	ve, _ := err.(*ValidationError)
	if ve == nil || len(ve.Problems) != 2 || ve.Problems[0].Field != "[0].templat" || ve.Problems[1].Field != "[2].tem" {
		t.Fatalf("got %v, want problems at [0] and [2]", err)
	}
}

// TestSplitArrayAgreesWithEncodingJSON: wherever SplitArray splits a
// batch, encoding/json reads it as one array of the same elements, byte
// for byte; on tricky inputs and random mutations of them.
func TestSplitArrayAgreesWithEncodingJSON(t *testing.T) {
	seeds := []string{
		`[{"template":"a"},{"template":"b","params":{"x":[1,2,{"y":null}]}}]`,
		" [ {\"a\":1} ,\t{\"b\":\"q\\\"\"}\n] \n",
		`[]`, `[1,"x",true,null,-0.5e3]`, `[{}]x`, `[{"a":1},]`, `[{"a":1}`, `[{"a":1,"a":2}]`,
	}
	check := func(in []byte) {
		raw, ok := SplitArray(in)
		if !ok {
			return
		}
		var want []json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(in))
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("on %q: split into %d elements, but encoding/json says %v", in, len(raw), err)
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			t.Fatalf("on %q: split, but encoding/json finds more after the array", in)
		}
		if len(raw) != len(want) {
			t.Fatalf("on %q: %d elements, encoding/json %d", in, len(raw), len(want))
		}
		for i := range raw {
			if !bytes.Equal(raw[i], want[i]) {
				t.Fatalf("on %q: element %d is %q, encoding/json's %q", in, i, raw[i], want[i])
			}
		}
	}
	split := 0
	for _, s := range seeds {
		check([]byte(s))
		if _, ok := SplitArray([]byte(s)); ok {
			split++
		}
	}
	if split != 5 {
		t.Fatalf("split %d of the seeds, want the 5 arrays", split)
	}
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte(`{}[]:,"\ ab01-.etrunl`)
	for range 20000 {
		check(mangle(r, seeds[r.IntN(len(seeds))], alphabet))
	}
}

// BenchmarkSplitArray splits a batch of 100 jobs as the intake does.
func BenchmarkSplitArray(b *testing.B) {
	data := benchBatch(100)
	b.ReportAllocs()
	for b.Loop() {
		if raw, ok := SplitArray(data); !ok || len(raw) != 100 {
			b.Fatal("not split")
		}
	}
}
