package intake

import (
	"encoding/json"

	"github.com/ballastdev/ballast/internal/jsonenc"
)

// appendJSON appends r's JSON, byte for byte what json.Marshal(r) gives
// (TestBatchResultJSONIsWhatEncodingJSONWrites holds it to that): a
// batch's reply holds one per job, and encoding/json's reflection over
// the embedded receipt was a visible part of what the intake spends on a
// batch. An error goes through encoding/json.
func (r BatchResult) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	first := true
	if r.Receipt != nil {
		b = jsonenc.Field(b, "job_id", true)
		b = jsonenc.String(b, r.JobID)
		b = jsonenc.Field(b, "attempt", false)
		b = jsonenc.Int(b, r.Attempt)
		b = jsonenc.Field(b, "state", false)
		b = jsonenc.String(b, string(r.State))
		b = jsonenc.Field(b, "queue", false)
		b = jsonenc.String(b, r.Queue)
		b = jsonenc.Field(b, "duplicate", false)
		if r.Duplicate {
			b = append(b, "true"...)
		} else {
			b = append(b, "false"...)
		}
		first = false
	}
	if r.Error != nil {
		e, err := json.Marshal(r.Error)
		if err != nil {
			return nil, err
		}
		b = jsonenc.Field(b, "error", first)
		b = append(b, e...)
	}
	return append(b, '}'), nil
}
