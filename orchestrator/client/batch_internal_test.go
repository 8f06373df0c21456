package client

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/ballastdev/ballast/jobs"
	"github.com/ballastdev/ballast/orchestrator/intake"
)

// TestBatchReceiptReadInPartsIsTheWholeReading: a large batch's reply read
// on several cores is what json.Unmarshal reads, and a reply not of the
// intake's form is read by json.Unmarshal itself, errors included.
func TestBatchReceiptReadInPartsIsTheWholeReading(t *testing.T) {
	res := make([]intake.BatchResult, 3000)
	for i := range res {
		if i%9 == 4 {
			res[i].Error = &intake.Error{Code: intake.CodeUnavailable, Message: "retry", Problems: []*jobs.FieldError{{Field: "x", Message: "y"}}}
			continue
		}
		res[i].Receipt = &intake.Receipt{JobID: fmt.Sprintf("j%05d", i), Attempt: 1, State: jobs.StateQueued, Queue: "burst", Duplicate: i%4 == 0}
	}
	whole, err := json.Marshal(intake.BatchReceipt{Results: res})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"the intake's form": whole,
		"another key after": append(append([]byte{}, whole[:len(whole)-1]...), []byte(`,"note":"x"}`)...),
		"a broken element":  append([]byte(`{"results":[{"job_id":7},`), whole[len(`{"results":[`):]...),
	} {
		var got, want intake.BatchReceipt
		gerr, werr := decodeBatchReceipt(data, &got), json.Unmarshal(data, &want)
		if (gerr == nil) != (werr == nil) || (gerr != nil && gerr.Error() != werr.Error()) {
			t.Fatalf("%s: error %v, json.Unmarshal's %v", name, gerr, werr)
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: read differently from json.Unmarshal", name)
		}
	}
}
