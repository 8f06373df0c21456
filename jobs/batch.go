package jobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/ballastdev/ballast/internal/spread"
)

// Limits on one batch of submissions: a JSON array of Submission objects,
// sent to the same subject and route as one job. Over NATS a batch is also
// bounded by the server's max_payload (1 MB by default); orchestrator/client
// splits a long list into batches that fit.
const (
	MaxBatchJobs  = 10000
	MaxBatchBytes = 8 << 20
)

// IsBatch reports whether a submission body is a batch: a JSON array rather
// than one object.
func IsBatch(data []byte) bool {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '['
}

// DecodeBatch parses a batch strictly, each element as DecodeSubmission
// parses one job. Every problem of every element is reported, named by its
// index ("[3].params.lr"), so a batch is fixed in one round; errors are
// *ValidationError.
func DecodeBatch(data []byte) ([]Submission, error) {
	if len(data) > MaxBatchBytes {
		return nil, &ValidationError{Problems: []*FieldError{{Field: "body",
			Message: fmt.Sprintf("the batch is %d bytes; the limit is %d (send it in several batches)", len(data), MaxBatchBytes)}}}
	}
	if !utf8.Valid(data) {
		return nil, &ValidationError{Problems: []*FieldError{{Field: "body", Message: "the message is not valid UTF-8"}}}
	}
	raw, ok := SplitArray(data)
	if !ok {
		raw = nil
		if err := decodeBatchArray(data, &raw); err != nil {
			return nil, err
		}
	}
	switch {
	case len(raw) == 0:
		return nil, &ValidationError{Problems: []*FieldError{{Field: "body", Message: "the batch is empty; send at least one job"}}}
	case len(raw) > MaxBatchJobs:
		return nil, &ValidationError{Problems: []*FieldError{{Field: "body",
			Message: fmt.Sprintf("the batch holds %d jobs; the limit is %d (send it in several batches)", len(raw), MaxBatchJobs)}}}
	}
	subs := make([]Submission, len(raw))
	errs := make([]error, len(raw))
	// Strict decoding (the duplicate-key walk, then the decode) is most of
	// a large batch's cost and each element stands alone: spread it over
	// the cores.
	spread.Each(len(raw), func(i int) { subs[i], errs[i] = DecodeSubmission(raw[i]) })
	var all []*FieldError
	for i, err := range errs {
		if err != nil {
			all = append(all, Indexed(i, err)...)
		}
	}
	if len(all) > 0 {
		return nil, &ValidationError{Problems: all}
	}
	return subs, nil
}

// decodeBatchArray reads data as one JSON array with encoding/json, whose
// errors say where the input went wrong.
func decodeBatchArray(data []byte, raw *[]json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(raw); err != nil {
		fe := jsonFieldError(err)
		fe.Field = "body" // the batch itself is malformed, not one job
		if errors.Is(err, io.ErrUnexpectedEOF) {
			fe.Message = "the JSON ends before the array does; send a whole array: [{...}, {...}]"
		}
		return &ValidationError{Problems: []*FieldError{fe}}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &ValidationError{Problems: []*FieldError{{Field: "body", Message: "extra data after the JSON array; send exactly one array"}}}
	}
	return nil
}

// SplitArray returns the elements of data, a JSON array and nothing after
// it but white space, as slices of data: a scan, where encoding/json reads
// the array once to find its end and again to copy out each element, and
// the elements can then be decoded in parallel. ok is false for input the
// scan cannot judge, invalid JSON among it: encoding/json then reads it,
// and says what is wrong.
func SplitArray(data []byte) (raw []json.RawMessage, ok bool) {
	d := dupScan{data: data, exact: func(string) bool { return true }}
	if d.peek() != '[' {
		return nil, false
	}
	d.i++
	if d.peek() == ']' {
		d.i++
	} else {
		for {
			d.ws()
			start := d.i
			if fe := d.value("", 1); fe != nil || d.bail {
				return nil, false
			}
			raw = append(raw, data[start:d.i])
			c := d.peek()
			d.i++
			if c == ']' {
				break
			}
			if c != ',' {
				return nil, false
			}
		}
	}
	d.ws()
	return raw, d.i == len(data)
}

// Indexed names the problems of err as those of element i of a batch. An
// error that is not a *ValidationError becomes one problem of the element.
func Indexed(i int, err error) []*FieldError {
	var ve *ValidationError
	if !errors.As(err, &ve) {
		return []*FieldError{{Field: fmt.Sprintf("[%d]", i), Message: err.Error()}}
	}
	out := make([]*FieldError, len(ve.Problems))
	for k, p := range ve.Problems {
		field := fmt.Sprintf("[%d]", i)
		if p.Field != "body" && p.Field != "" {
			field += "." + p.Field
		}
		out[k] = &FieldError{Field: field, Message: p.Message, Err: p.Err}
	}
	return out
}
