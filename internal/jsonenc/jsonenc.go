// Package jsonenc appends JSON values exactly as encoding/json writes them,
// for the few types that are encoded once or more per job on the hot path
// (events, task payloads), where encoding/json's reflection was a visible
// share of the CPU. Anything that is not plain is handed to encoding/json,
// so the bytes are always the ones json.Marshal would give: a record's
// fingerprint, and any reader, see no difference.
//
// Hand-written JSON, kept because every encoder built on it is faster than
// the JSON library (go-json-experiment/json) writing the same bytes: see
// the BenchmarkJSONLibraryEncode* benchmarks of orchestrator/model/jobs,
// orchestrator/model/events, orchestrator/control/intake and queues.
package jsonenc

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// String appends s as a JSON string. A string of printable ASCII with no
// character encoding/json escapes is written as it is; any other goes
// through json.Marshal, which escapes it (HTML characters, control
// characters, invalid UTF-8, U+2028 and U+2029) its own way.
func String(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// field appends a member's name (a JSON string of plain ASCII, as struct
// tags are) and its colon, after a comma unless first.
func field(b []byte, name string, first bool) []byte {
	if !first {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

// Float appends f as encoding/json writes a float64: the shortest form
// that reads back the same, in exponent form only below 1e-6 or from 1e21
// on, with a one-digit negative exponent left unpadded. NaN and the
// infinities, which JSON cannot hold, are refused.
func Float(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// Value appends v: strings, float64s, bools and nil by hand, anything
// else through json.Marshal.
func Value(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		return String(b, x), nil
	case float64:
		return Float(b, x)
	case bool:
		return strconv.AppendBool(b, x), nil
	case nil:
		return append(b, "null"...), nil
	}
	j, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, j...), nil
}

// Strings appends a JSON array of ss.
func Strings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = String(b, s)
	}
	return append(b, ']')
}

// StringMap appends m as a JSON object, its keys sorted as encoding/json
// sorts them.
func StringMap(b []byte, m map[string]string) []byte {
	b, _ = object(b, m, func(b []byte, v string) ([]byte, error) { return String(b, v), nil })
	return b
}

// RawMap appends m as a JSON object, its keys sorted as encoding/json
// sorts them, each value as it is: the caller has checked that each is
// JSON text encoding/json would write unchanged.
func RawMap(b []byte, m map[string]json.RawMessage) []byte {
	b, _ = object(b, m, func(b []byte, v json.RawMessage) ([]byte, error) { return append(b, v...), nil })
	return b
}

// Map appends m as a JSON object, its keys sorted as encoding/json sorts
// them, each value by Value.
func Map(b []byte, m map[string]any) ([]byte, error) { return object(b, m, Value) }

func object[V any](b []byte, m map[string]V, value func([]byte, V) ([]byte, error)) ([]byte, error) {
	// The keys of a small map are sorted on the stack: events and specs
	// carry maps of a few keys, and one is encoded for every job.
	var small [8]string
	keys := small[:0]
	if len(m) > len(small) {
		keys = make([]string, 0, len(m))
	}
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = String(b, k)
		b = append(b, ':')
		var err error
		if b, err = value(b, m[k]); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}
