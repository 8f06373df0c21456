package jobs

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
)

// Limits on one submission. A message over MaxSubmissionBytes is refused before
// it is parsed, over NATS and HTTP alike.
const (
	MaxSubmissionBytes  = 64 << 10
	MaxParams           = 64
	MaxLabels           = 32
	MaxLabelValueBytes  = 256
	MaxIdempotencyBytes = 200
	MaxRawArgs          = 256
)

var (
	labelKeyRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_./-]{0,62}$`)
	regionRE   = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)
)

// RegionLabel is the label that pins a job to a region: its elastic work then
// runs only on pools in that region.
const RegionLabel = "region"

// Submission is what a user sends to run a job: a template and its parameters,
// with optional overrides. It is the JSON body of NATS ballast.jobs.submit and
// HTTP POST /api/v1/jobs.
type Submission struct {
	Template string                     `json:"template,omitempty"`
	Params   map[string]json.RawMessage `json:"params,omitempty"`
	// IdempotencyKey makes resubmission safe: the same key returns the same job.
	IdempotencyKey string            `json:"idempotency_key,omitempty"`
	Team           string            `json:"team,omitempty"`
	Labels         map[string]string `json:"labels,omitempty"`
	// Class overrides the template's class (core or burst).
	Class string `json:"class,omitempty"`
	// Timeout overrides the template's timeout, e.g. "2h".
	Timeout *Duration `json:"timeout,omitempty"`
	// Command is a raw argv, accepted only when the server allows raw commands.
	Command []string `json:"command,omitempty"`
	// Slots overrides the template's slots per member, from 1 up to the
	// template's max_slots (or its slots, when it sets no max_slots).
	Slots *int `json:"slots,omitempty"`
	// GPUShare asks for that share of one GPU (above 0, below 1) in place
	// of the template's gpu_share or whole GPU, for a job of one slot.
	GPUShare *float64 `json:"gpu_share,omitempty"`
}

// DecodeSubmission parses a submission strictly: size-limited, unknown fields
// and duplicate keys refused, exactly one JSON object. Errors are *ValidationError.
func DecodeSubmission(data []byte) (Submission, error) {
	var s Submission
	if len(data) > MaxSubmissionBytes {
		return s, &ValidationError{Problems: []*FieldError{{Field: "body",
			Message: fmt.Sprintf("the message is %d bytes; the limit is %d (send large inputs by reference, e.g. a path or URL parameter)", len(data), MaxSubmissionBytes)}}}
	}
	if !utf8.Valid(data) {
		return s, &ValidationError{Problems: []*FieldError{{Field: "body", Message: "the message is not valid UTF-8"}}}
	}
	if s, ok := decodeSubmissionHand(data); ok {
		return s, nil
	}
	return decodeSubmissionStrict(data)
}

// decodeSubmissionStrict is DecodeSubmission after its size and UTF-8
// checks, for any input, by the JSON library: duplicate keys, unknown
// fields and anything after the object are refused, each named.
func decodeSubmissionStrict(data []byte) (Submission, error) {
	var s Submission
	if err := jsonv2.Unmarshal(data, &s, strictJSON); err != nil {
		return Submission{}, &ValidationError{Problems: []*FieldError{jsonFieldError(data, err)}}
	}
	return s, nil
}

// checkEnvelope validates the fields that do not depend on the template.
func (s Submission) checkEnvelope(ps *problems) {
	if len(s.Params) > MaxParams {
		ps.add("params", fmt.Sprintf("%d parameters; the limit is %d", len(s.Params), MaxParams))
	}
	if len(s.IdempotencyKey) > MaxIdempotencyBytes {
		ps.add("idempotency_key", fmt.Sprintf("is %d bytes; the limit is %d", len(s.IdempotencyKey), MaxIdempotencyBytes))
	}
	if msg := KeyProblem(s.IdempotencyKey); msg != "" {
		ps.add("idempotency_key", msg)
	}
	if msg := CheckText(s.Template, NoControls); msg != "" {
		ps.add("template", msg)
	}
	if s.Team != "" && !nameRE.MatchString(s.Team) {
		ps.add("team", "use lower-case letters, digits, '.', '_' or '-' (at most 63)")
	}
	if len(s.Labels) > MaxLabels {
		ps.add("labels", fmt.Sprintf("%d labels; the limit is %d", len(s.Labels), MaxLabels))
	}
	for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
		if !labelKeyRE.MatchString(k) {
			ps.add("labels."+k, "a label key uses letters, digits, '_', '.', '/' or '-' (at most 63)")
		}
		if k == RegionLabel && !regionRE.MatchString(s.Labels[k]) {
			ps.add("labels."+k, "a region is 1 to 32 of a-z, 0-9 and '-', as in the pools' region settings")
		}
		if msg := CheckText(s.Labels[k], NoControls); msg != "" {
			ps.add("labels."+k, "the value "+msg)
		}
		if len(s.Labels[k]) > MaxLabelValueBytes {
			ps.add("labels."+k, fmt.Sprintf("value is %d bytes; the limit is %d", len(s.Labels[k]), MaxLabelValueBytes))
		}
	}
	if s.Class != "" {
		if _, err := ParseClass(s.Class); err != nil {
			ps.add("class", err.Error())
		}
	}
	if s.Timeout != nil {
		if *s.Timeout <= 0 {
			ps.add("timeout", fmt.Sprintf("must be positive, got %s", s.Timeout))
		} else if s.Timeout.Std() > MaxTimeout {
			ps.add("timeout", fmt.Sprintf("%s is above the limit %s", s.Timeout, MaxTimeout))
		}
	}
	if len(s.Command) > MaxRawArgs {
		ps.add("command", fmt.Sprintf("%d arguments; the limit is %d", len(s.Command), MaxRawArgs))
	}
	if len(s.Command) > 0 && strings.TrimSpace(s.Command[0]) == "" {
		ps.add("command[0]", "the program name is empty")
	}
	for i, arg := range s.Command {
		if msg := CheckText(arg, TextControls); msg != "" {
			ps.add(fmt.Sprintf("command[%d]", i), msg)
		}
	}
}
