package intake

import "github.com/ballastdev/ballast/internal/jsonenc"

// appendJSON appends r's JSON, byte for byte what json.Marshal(r) gives
// (TestBatchResultJSONIsWhatEncodingJSONWrites holds it to that): a
// batch's reply holds one per job, and encoding/json's reflection over
// the embedded receipt was a visible part of what the intake spends on a
// batch. An error goes through encoding/json. Hand-written JSON, kept
// because it is faster than the JSON library writing the same bytes:
// BenchmarkJSONLibraryEncodeBatchResult.
func (r BatchResult) appendJSON(b []byte) ([]byte, error) {
	o := jsonenc.Open(b)
	if r.Receipt != nil {
		o.String("job_id", r.JobID)
		o.Int("attempt", int64(r.Attempt))
		o.String("state", string(r.State))
		o.String("queue", r.Queue)
		o.Bool("duplicate", r.Duplicate)
		if r.Warning != "" {
			o.String("warning", r.Warning)
		}
	}
	if r.Error != nil {
		o.Marshal("error", r.Error)
	}
	return o.Close()
}
