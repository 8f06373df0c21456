package intake

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/ballastdev/ballast/jobs"
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
