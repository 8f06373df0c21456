package jobs

import (
	"encoding/json"
	"strconv"

	"github.com/ballastdev/ballast/internal/jsonenc"
)

// AppendJSON appends s's JSON, byte for byte what json.Marshal(s) gives
// (TestSpecJSONIsWhatEncodingJSONWrites holds it to that, and fails when a
// field is added to Spec or Size until it is written here too). Every
// submission encodes its spec, for the record and for its fingerprint, and
// encoding/json's reflection over the spec's fields was the largest part
// of what a batch's jobs cost the intake besides Redis.
func (s Spec) AppendJSON(b []byte) ([]byte, error) {
	var err error
	first := true
	field := func(name string) {
		b = jsonenc.Field(b, name, first)
		first = false
	}
	str := func(name, v string) {
		if v != "" {
			field(name)
			b = jsonenc.String(b, v)
		}
	}
	num := func(name string, v int64) {
		if v != 0 {
			field(name)
			b = strconv.AppendInt(b, v, 10)
		}
	}
	flag := func(name string, v bool) {
		if v {
			field(name)
			b = append(b, "true"...)
		}
	}
	strs := func(name string, v []string) {
		if len(v) > 0 {
			field(name)
			b = jsonenc.Strings(b, v)
		}
	}
	strMap := func(name string, v map[string]string) {
		if len(v) > 0 {
			field(name)
			b = jsonenc.StringMap(b, v)
		}
	}
	b = append(b, '{')
	str("template", s.Template)
	if len(s.Params) > 0 {
		field("params")
		if b, err = jsonenc.Map(b, s.Params); err != nil {
			return nil, err
		}
	}
	strs("command", s.Command)
	str("handler", s.Handler)
	field("class")
	b = jsonenc.String(b, string(s.Class))
	field("rhythm")
	b = jsonenc.String(b, string(s.Rhythm))
	flag("checkpointable", s.Checkpointable)
	flag("retryable", s.Retryable)
	num("max_retries", int64(s.MaxRetries))
	if len(s.NoRetryExitCodes) > 0 {
		field("no_retry_exit_codes")
		b = append(b, '[')
		for i, c := range s.NoRetryExitCodes {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.Int(b, c)
		}
		b = append(b, ']')
	}
	// Durations and byte sizes are text (their MarshalText), so strings.
	field("timeout")
	b = jsonenc.String(b, s.Timeout.String())
	field("grace")
	b = jsonenc.String(b, s.Grace.String())
	str("team", s.Team)
	strMap("labels", s.Labels)
	str("idempotency_key", s.IdempotencyKey)
	str("metric", s.Metric)
	strMap("env", s.Env)
	strs("pass_env", s.PassEnv)
	str("traceparent", s.TraceParent)
	if s.CoreMaxWait != nil {
		field("core_max_wait")
		b = jsonenc.String(b, s.CoreMaxWait.String())
	}
	t, err := s.StartBy.MarshalJSON() // omitempty does not omit a struct
	if err != nil {
		return nil, err
	}
	field("start_by")
	b = append(b, t...)
	str("qos", s.QoS)
	if s.Limits != nil {
		l, err := json.Marshal(s.Limits) // rare, and nested: left to encoding/json
		if err != nil {
			return nil, err
		}
		field("limits")
		b = append(b, l...)
	}
	// Size's fields, as encoding/json lifts an embedded struct's.
	num("slots", int64(s.Slots))
	num("replicas", int64(s.Replicas))
	if s.CPUs != 0 {
		field("cpus")
		if b, err = jsonenc.Float(b, s.CPUs); err != nil {
			return nil, err
		}
	}
	if s.Memory != 0 {
		field("memory")
		b = jsonenc.String(b, s.Memory.compact())
	}
	strMap("requires", s.Requires)
	return append(b, '}'), nil
}
