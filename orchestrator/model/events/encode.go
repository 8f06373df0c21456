package events

import "github.com/ballastdev/ballast/internal/jsonenc"

// AppendJSON appends e's JSON, byte for byte what json.Marshal(e) gives
// (TestEventJSONIsWhatEncodingJSONWrites holds it to that, for every
// field): a job's submission, start and end each publish one, and
// encoding/json's reflection over the struct and its Data map was a good
// part of what a batch costs the intake. Data's values other than strings,
// numbers, booleans and nil go through encoding/json one by one.
// Hand-written JSON, kept because it is faster than the JSON library
// writing the same bytes: BenchmarkJSONLibraryEncodeEvent.
func (e Event) AppendJSON(b []byte) ([]byte, error) {
	o := jsonenc.Open(b)
	o.String("id", e.ID)
	o.String("type", string(e.Type))
	o.OmitEmpty("job_id", e.JobID)
	o.OmitZero("attempt", int64(e.Attempt))
	o.OmitZero("runs", int64(e.Runs))
	o.OmitEmpty("state", string(e.State))
	o.OmitEmpty("queue", e.Queue)
	o.OmitEmpty("worker", e.Worker)
	o.OmitEmpty("reason", e.Reason)
	o.OmitEmpty("pipeline", e.Pipeline)
	o.OmitEmpty("run_id", e.RunID)
	o.OmitEmpty("sweep_id", e.SweepID)
	o.Time("time", e.Time)
	o.Map("data", e.Data)
	return o.Close()
}
