package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Limits of one sweep. They are part of the documented contract.
const (
	// MaxTrials bounds the number of trials of one sweep, whatever the space:
	// a grid's product, a random count or a list's length.
	MaxTrials = 10000
	// MaxSpecBytes bounds the encoded Spec. It is larger than
	// jobs.MaxSubmissionBytes because an explicit list carries every trial,
	// and stays under NATS's default 1 MB payload limit.
	MaxSpecBytes = 256 << 10
	// MaxMetricKeyBytes bounds the metric key name.
	MaxMetricKeyBytes = 64
	// DefaultMetric is the metric key used when the spec names none.
	DefaultMetric = "metric"
)

// Goal says whether a lower or a higher metric is better.
type Goal string

const (
	// Minimize: lower is better (loss, error rate). The default.
	Minimize Goal = "minimize"
	// Maximize: higher is better (accuracy, reward).
	Maximize Goal = "maximize"
)

// better reports whether a is strictly better than b under g.
func (g Goal) better(a, b float64) bool {
	if g == Maximize {
		return a > b
	}
	return a < b
}

// Spec is a sweep submission: the body of NATS ballast.sweeps.submit and what
// `ballast sweep` sends.
type Spec struct {
	// Template names the configured template every trial runs.
	Template string `json:"template"`
	// Space is the search space; exactly one of its kinds is set.
	Space Space `json:"space"`
	// MaxParallel bounds how many trials are queued or running at once;
	// 0 means no limit (every trial is enqueued at submission).
	MaxParallel int `json:"max_parallel,omitempty"`
	// Metric is the key of the metric in the JSON line a trial prints
	// (default "metric").
	Metric string `json:"metric,omitempty"`
	// Goal is minimize (default) or maximize.
	Goal Goal `json:"goal,omitempty"`
	// Fixed holds parameters common to every trial. A parameter is either
	// fixed or in the space, never both.
	Fixed map[string]json.RawMessage `json:"fixed,omitempty"`
	// Team is charged for the trials instead of the template's team.
	Team string `json:"team,omitempty"`
	// Labels are copied to every trial.
	Labels map[string]string `json:"labels,omitempty"`
	// EarlyStop turns on the median stopping rule; nil means off.
	EarlyStop *MedianRule `json:"early_stop,omitempty"`
	// IdempotencyKey makes resubmission safe: the same key with the same
	// spec returns the first sweep. Trials get keys of their own, derived
	// from the sweep's ID, so the controller can enqueue them again after a
	// crash without doubling any.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// WithDefaults returns a copy with Metric and Goal filled in.
func (s Spec) WithDefaults() Spec {
	if s.Metric == "" {
		s.Metric = DefaultMetric
	}
	if s.Goal == "" {
		s.Goal = Minimize
	}
	return s
}

// Space is a search space: exactly one of Grid, Random and List.
type Space struct {
	// Grid maps each parameter to its values; the trials are the cartesian product.
	Grid map[string][]json.RawMessage `json:"grid,omitempty"`
	// Random draws Count trials from per-parameter distributions.
	Random *Random `json:"random,omitempty"`
	// List gives each trial's parameters explicitly.
	List []map[string]json.RawMessage `json:"list,omitempty"`
}

// Random is a seeded random search: the same seed gives the same trials.
type Random struct {
	Seed   uint64          `json:"seed"`
	Count  int             `json:"count"`
	Params map[string]Dist `json:"params"`
}

// Distribution types of a random search.
const (
	// DistUniform draws a float uniformly from [min, max].
	DistUniform = "uniform"
	// DistLogUniform draws a float whose logarithm is uniform; min > 0.
	DistLogUniform = "log_uniform"
	// DistIntUniform draws an integer uniformly from [min, max], both inclusive.
	DistIntUniform = "int_uniform"
	// DistChoice picks one of Values uniformly.
	DistChoice = "choice"
)

// Dist is the distribution of one parameter of a random search, such as
// {"type":"log_uniform","min":1e-4,"max":0.1} or {"type":"choice","values":["a","b"]}.
type Dist struct {
	Type   string            `json:"type"`
	Min    *float64          `json:"min,omitempty"`
	Max    *float64          `json:"max,omitempty"`
	Values []json.RawMessage `json:"values,omitempty"`
}

// DecodeSpec parses a sweep spec strictly: size-limited, unknown fields
// and duplicate keys refused, exactly one JSON object. Errors are *jobs.ValidationError naming
// the field. It does not check the spec against the catalog: Expand does.
func DecodeSpec(data []byte) (Spec, error) {
	var s Spec
	if len(data) > MaxSpecBytes {
		return s, invalid("body", fmt.Sprintf("the message is %d bytes; the limit is %d (a sweep of more than a few thousand listed trials is better written as a grid or a random space)", len(data), MaxSpecBytes))
	}
	if !utf8.Valid(data) {
		return s, invalid("body", "the message is not valid UTF-8")
	}
	if fe := jobs.DuplicateKey(data, specMaps); fe != nil {
		return s, &jobs.ValidationError{Problems: []*jobs.FieldError{fe}}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Spec{}, &jobs.ValidationError{Problems: []*jobs.FieldError{decodeError(err)}}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Spec{}, invalid("body", "extra data after the JSON object; send exactly one object")
	}
	return s, nil
}

// specMaps reports the objects of a Spec that are maps, whose keys are
// compared exactly by the duplicate-key check: parameters and labels.
func specMaps(path string) bool {
	switch path {
	case "fixed", "labels", "space.grid", "space.random.params":
		return true
	}
	// A trial of a list: "space.list[3]", not something inside it.
	rest, ok := strings.CutPrefix(path, "space.list[")
	return ok && strings.HasSuffix(rest, "]") && !strings.ContainsAny(rest, ".[")
}

func invalid(field, msg string) error {
	return &jobs.ValidationError{Problems: []*jobs.FieldError{{Field: field, Message: msg}}}
}

// decodeError turns an encoding/json error into a field error.
func decodeError(err error) *jobs.FieldError {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return &jobs.FieldError{Field: "body", Message: fmt.Sprintf("not valid JSON at byte %d: %v", syn.Offset, syn)}
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "body"
		}
		return &jobs.FieldError{Field: field, Message: fmt.Sprintf("must be %s, got a JSON %s", kindName(typ.Type.Kind().String()), typ.Value)}
	case errors.Is(err, io.EOF):
		return &jobs.FieldError{Field: "body", Message: `empty message; send a JSON object such as {"template":"NAME","space":{"grid":{"lr":[0.1,0.01]}}}`}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		if name == "" {
			name = `""` // the empty key: the field path must still name it
		}
		return &jobs.FieldError{Field: name, Message: "unknown field (a sweep takes: template, space{grid|random{seed,count,params}|list}, max_parallel, metric, goal, fixed, team, labels, early_stop{min_trials,after_step}, idempotency_key; a distribution takes: type, min, max, values)"}
	}
	return &jobs.FieldError{Field: "body", Message: err.Error()}
}

func kindName(k string) string {
	switch k {
	case "map", "struct":
		return "an object"
	case "slice":
		return "an array"
	case "ptr":
		return "an object"
	case "uint64", "int", "int64":
		return "an integer"
	case "float64":
		return "a number"
	}
	return "a " + k
}
