package jobs

import "github.com/ballastdev/ballast/internal/jsonenc"

// AppendJSON appends s's JSON, byte for byte what json.Marshal(s) gives
// (TestSpecJSONIsWhatEncodingJSONWrites holds it to that, and fails when a
// field is added to Spec or Size until it is written here too). Every
// submission encodes its spec, for the record and for its fingerprint, and
// encoding/json's reflection over the spec's fields was the largest part
// of what a batch's jobs cost the intake besides Redis. Hand-written JSON,
// kept because it is faster than the JSON library writing the same bytes:
// BenchmarkJSONLibraryEncodeSpec.
func (s Spec) AppendJSON(b []byte) ([]byte, error) {
	o := jsonenc.Open(b)
	o.OmitEmpty("template", s.Template)
	o.Map("params", s.Params)
	o.Strings("command", s.Command)
	o.OmitEmpty("handler", s.Handler)
	o.String("class", string(s.Class))
	o.String("rhythm", string(s.Rhythm))
	o.OmitFalse("checkpointable", s.Checkpointable)
	o.OmitFalse("retryable", s.Retryable)
	o.OmitZero("max_retries", int64(s.MaxRetries))
	if len(s.NoRetryExitCodes) > 0 {
		o.Marshal("no_retry_exit_codes", s.NoRetryExitCodes)
	}
	// Durations and byte sizes are text (their MarshalText), so strings.
	o.String("timeout", s.Timeout.String())
	o.String("grace", s.Grace.String())
	o.OmitEmpty("team", s.Team)
	o.StringMap("labels", s.Labels)
	o.OmitEmpty("idempotency_key", s.IdempotencyKey)
	o.OmitEmpty("metric", s.Metric)
	o.StringMap("env", s.Env)
	o.Strings("pass_env", s.PassEnv)
	o.OmitEmpty("traceparent", s.TraceParent)
	if s.CoreMaxWait != nil {
		o.String("core_max_wait", s.CoreMaxWait.String())
	}
	o.Time("start_by", s.StartBy) // omitempty does not omit a struct
	o.OmitEmpty("qos", s.QoS)
	if s.Limits != nil {
		o.Marshal("limits", s.Limits) // rare, and nested: left to encoding/json
	}
	// Size's fields, as encoding/json lifts an embedded struct's.
	o.OmitZero("slots", int64(s.Slots))
	o.OmitZero("replicas", int64(s.Replicas))
	o.Float("cpus", s.CPUs, true)
	if s.Memory != 0 {
		o.String("memory", s.Memory.compact())
	}
	o.StringMap("requires", s.Requires)
	o.Float("gpu_share", s.GPUShare, true)
	return o.Close()
}
