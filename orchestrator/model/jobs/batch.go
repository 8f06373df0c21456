package jobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

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
	raw, err := splitArray(data)
	if err != nil {
		return nil, &ValidationError{Problems: []*FieldError{batchError(data, err)}}
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

// SplitArray returns the elements of data, a JSON array and nothing after
// it but white space, as slices of data, so that they can be decoded in
// parallel; ok is false for anything else.
func SplitArray(data []byte) (raw []json.RawMessage, ok bool) {
	raw, err := splitArray(data)
	return raw, err == nil
}

// errNotArray is a batch that is some other JSON value.
type errNotArray jsontext.Kind

func (e errNotArray) Error() string {
	return "must be an array, got a JSON " + jsonKindName(jsontext.Kind(e))
}

// splitArray is SplitArray, saying what is wrong with data when it is not
// one JSON array. Names repeated inside an element are left to the
// decoding of the element, which names them with its index.
func splitArray(data []byte) ([]json.RawMessage, error) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(data), jsontext.AllowDuplicateNames(true))
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	if tok.Kind() != '[' {
		return nil, errNotArray(tok.Kind())
	}
	var raw []json.RawMessage
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		// v is the element's text as it stands in data, and ends where
		// the decoder now is.
		end := int(dec.InputOffset())
		raw = append(raw, data[end-len(v):end:end])
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, errExtraData
	}
	return raw, nil
}

// batchError names what is wrong with a batch that is not one JSON array.
func batchError(data []byte, err error) *FieldError {
	var notArray errNotArray
	switch {
	case errors.Is(err, errExtraData):
		return &FieldError{Field: "body", Message: "extra data after the JSON array; send exactly one array"}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &FieldError{Field: "body", Message: "the JSON ends before the array does; send a whole array: [{...}, {...}]"}
	case errors.As(err, &notArray):
		return &FieldError{Field: "body", Message: notArray.Error()}
	}
	fe := jsonFieldError(data, err)
	fe.Field = "body" // the batch itself is malformed, not one job
	return fe
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
