package client

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
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

// TestResultParsedByHandIsWhatEncodingJSONReads: a result the parser
// takes reads as json.Unmarshal reads it, and what it does not take
// (escapes, non-ASCII, errors, other orders and spacing, numbers JSON
// refuses) is left to encoding/json: every form here is either parsed to
// the same value or refused.
func TestResultParsedByHandIsWhatEncodingJSONReads(t *testing.T) {
	var forms [][]byte
	for _, id := range []string{"01HZX7ABCD", "", `q"uote`, "<&>", "é", "tab\there", "a/b"} {
		for _, att := range []int{0, 1, 12, 123456789, 1234567890, -1} {
			for _, dup := range []bool{false, true} {
				r := intake.BatchResult{Receipt: &intake.Receipt{JobID: id, Attempt: att, State: jobs.StateQueued, Queue: id, Duplicate: dup}}
				b, _ := json.Marshal(r)
				forms = append(forms, b)
			}
		}
	}
	forms = append(forms,
		[]byte(`{"job_id":"j","attempt":01,"state":"queued","queue":"q","duplicate":false}`),
		[]byte(`{"job_id":"j","attempt":1,"state":"queued","queue":"q","duplicate":false} `),
		[]byte(`{"job_id":"j", "attempt":1,"state":"queued","queue":"q","duplicate":false}`),
		[]byte(`{"attempt":1,"job_id":"j","state":"queued","queue":"q","duplicate":false}`),
		[]byte(`{"job_id":"j","attempt":1,"state":"queued","queue":"q","duplicate":false,"error":{"code":"internal","message":"m"}}`),
		[]byte(`{"error":{"code":"unavailable","message":"retry"}}`),
		[]byte(`{"job_id":"j","attempt":1,"state":"queued","queue":"q","duplicate":nope}`),
		[]byte(`{"job_id":"j\u0041","attempt":1,"state":"queued","queue":"q","duplicate":false}`),
		[]byte("{\"job_id\":\"j\x01\",\"attempt\":1,\"state\":\"queued\",\"queue\":\"q\",\"duplicate\":false}"),
	)
	parsed := 0
	for _, f := range forms {
		got, ok := parseResult(f)
		if !ok {
			continue
		}
		parsed++
		var want intake.BatchResult
		if err := json.Unmarshal(f, &want); err != nil {
			t.Fatalf("%s: parsed by hand, but encoding/json refuses it: %v", f, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: parsed as %+v, encoding/json reads %+v", f, got.Receipt, want.Receipt)
		}
	}
	if parsed < 20 {
		t.Fatalf("only %d of %d forms parsed by hand: the intake's own form is no longer taken", parsed, len(forms))
	}
}
