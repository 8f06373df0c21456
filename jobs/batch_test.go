package jobs

import (
	"fmt"
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
