package intake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// TestBatchReceiptEncodedInPartsIsTheWholeEncoding: the reply to a large
// batch, encoded in parts on several cores, is byte for byte the JSON of
// the whole receipt, in order.
func TestBatchReceiptEncodedInPartsIsTheWholeEncoding(t *testing.T) {
	for _, n := range []int{1, 2, 1023, 1024, 1025, 4095} {
		res := make([]BatchResult, n)
		for i := range res {
			if i%7 == 3 {
				res[i].Error = &Error{Code: CodeConflict, Message: "<key> & " + msgConflict("job")}
				continue
			}
			res[i].Receipt = &Receipt{JobID: fmt.Sprintf("j%05d", i), Attempt: 1, State: jobs.StateQueued, Queue: "burst", Duplicate: i%5 == 0}
		}
		got, want := encodeBatchReceipt(res), encode(BatchReceipt{Results: res})
		if !bytes.Equal(got, want) {
			t.Fatalf("%d results: encoded in parts %d bytes, whole %d bytes; first difference near %q",
				n, len(got), len(want), got[min(len(got), firstDiff(got, want)):min(len(got), firstDiff(got, want)+40)])
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestBatchResultJSONIsWhatEncodingJSONWrites: a result written by hand is
// the bytes json.Marshal gives, with a receipt, an error, both or
// neither, and strings that need escaping; a field added to Receipt or
// BatchResult fails here until appendJSON writes it.
func TestBatchResultJSONIsWhatEncodingJSONWrites(t *testing.T) {
	if n := reflect.TypeFor[Receipt]().NumField(); n != 6 {
		t.Fatalf("Receipt has %d fields; appendJSON writes 6: teach it the new ones, then change this count", n)
	}
	if n := reflect.TypeFor[BatchResult]().NumField(); n != 2 {
		t.Fatalf("BatchResult has %d fields; appendJSON writes 2: teach it the new ones, then change this count", n)
	}
	for _, id := range []string{"01HZX7", `q"uote`, "<&>", "é", ""} {
		for _, rec := range []*Receipt{nil, {JobID: id, Attempt: 2, State: jobs.State(id), Queue: id + "q", Duplicate: true}, {JobID: id}, {JobID: id, Warning: id + " lost"}} {
			for _, e := range []*Error{nil, {Code: CodeInvalid, Message: id, Problems: []*jobs.FieldError{{Field: "[1]", Message: "<bad>"}}}} {
				r := BatchResult{Receipt: rec, Error: e}
				want, _ := json.Marshal(r)
				if got, err := r.appendJSON(nil); err != nil || string(got) != string(want) {
					t.Fatalf("%+v: appendJSON gives %s (%v), encoding/json %s", r, got, err, want)
				}
			}
		}
	}
}
