package events

import (
	"github.com/ballastdev/ballast/internal/jsonenc"
)

// appendJSON appends e's JSON, byte for byte what json.Marshal(e) gives
// (TestEventJSONIsWhatEncodingJSONWrites holds it to that, for every
// field): a job's submission, start and end each publish one, and
// encoding/json's reflection over the struct and its Data map was a good
// part of what a batch costs the intake. Data's values other than strings,
// numbers, booleans and nil go through encoding/json one by one.
func (e Event) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	b = jsonenc.Field(b, "id", true)
	b = jsonenc.String(b, e.ID)
	b = jsonenc.Field(b, "type", false)
	b = jsonenc.String(b, string(e.Type))
	str := func(name, v string) {
		if v != "" {
			b = jsonenc.Field(b, name, false)
			b = jsonenc.String(b, v)
		}
	}
	num := func(name string, v int) {
		if v != 0 {
			b = jsonenc.Field(b, name, false)
			b = jsonenc.Int(b, v)
		}
	}
	str("job_id", e.JobID)
	num("attempt", e.Attempt)
	num("runs", e.Runs)
	str("state", string(e.State))
	str("queue", e.Queue)
	str("worker", e.Worker)
	str("reason", e.Reason)
	str("pipeline", e.Pipeline)
	str("run_id", e.RunID)
	str("sweep_id", e.SweepID)
	t, err := e.Time.MarshalJSON()
	if err != nil {
		return nil, err
	}
	b = jsonenc.Field(b, "time", false)
	b = append(b, t...)
	if len(e.Data) > 0 {
		b = jsonenc.Field(b, "data", false)
		if b, err = jsonenc.Map(b, e.Data); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}
