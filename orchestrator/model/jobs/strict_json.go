package jobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// strictJSON is how the JSON library decodes what users send: unknown
// members refused, and (the library's defaults) duplicate names and
// invalid UTF-8 refused too. Names match fields regardless of case, as
// encoding/json matched them, so a client that wrote "Template" still
// works; a field named twice in two cases is a duplicate.
var strictJSON = jsonv2.JoinOptions(
	jsonv2.RejectUnknownMembers(true),
	jsonv2.MatchCaseInsensitiveNames(true),
	jsonv1.MatchCaseSensitiveDelimiter(true), // "idempotencykey" is no idempotency_key
)

// errExtraData is data after the one JSON value a message holds.
var errExtraData = errors.New("extra data after the JSON value")

// jsonFieldError turns an error of the JSON library, met reading data (a
// submission), into a problem naming the field at fault and what to send.
// Errors are rare, so it may read data again to say more.
func jsonFieldError(data []byte, err error) *FieldError {
	var syn *jsontext.SyntacticError
	var sem *jsonv2.SemanticError
	var dur *durationError
	switch {
	case len(bytes.TrimLeft(data, " \t\r\n")) == 0:
		return &FieldError{Field: "body", Message: "empty message; send a JSON object such as {\"template\":\"NAME\",\"params\":{}}"}
	case errors.Is(err, errExtraData):
		return &FieldError{Field: "body", Message: "extra data after the JSON object; send exactly one object"}
	case errors.As(err, &syn) && errors.Is(syn.Err, jsontext.ErrDuplicateName):
		return &FieldError{Field: fieldPathIn(data, syn.JSONPointer), Message: duplicateKeyMessage}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &FieldError{Field: "body", Message: "not valid JSON: unexpected EOF (the message ends inside a value)"}
	case errors.As(err, &syn) && firstValueWhole(data):
		// The library reads one value and refuses what follows it.
		return jsonFieldError(data, errExtraData)
	case errors.As(err, &syn):
		// encoding/json says what it looked for ("invalid character '}'
		// looking for beginning of object key string") where the library
		// says only what it found: its words are kept, as users saw them,
		// for any input it also refuses.
		var old *json.SyntaxError
		if errors.As(json.Unmarshal(data, new(json.RawMessage)), &old) {
			return &FieldError{Field: "body", Message: fmt.Sprintf("not valid JSON at byte %d: %v", old.Offset, old)}
		}
		return &FieldError{Field: "body", Message: fmt.Sprintf("not valid JSON at byte %d: %v", syn.ByteOffset+1, syn.Err)}
	case errors.As(err, &dur):
		// Timeout is the only Duration in a Submission.
		return &FieldError{Field: "timeout", Message: dur.Error()}
	case errors.As(err, &sem) && errors.Is(sem.Err, jsonv2.ErrUnknownName):
		return &FieldError{Field: pathSegment(sem.JSONPointer.LastToken()),
			Message: "unknown field (known: template, params, idempotency_key, team, labels, class, timeout, command)"}
	case errors.As(err, &sem) && sem.GoType != nil:
		// The member of the submission that holds the bad value, as
		// encoding/json named it: "labels" for a label's value too.
		field := "body"
		for tok := range sem.JSONPointer.Tokens() {
			field = pathSegment(tok)
			break
		}
		got := "a JSON " + jsonKindName(sem.JSONKind)
		if sem.JSONKind == '0' && len(sem.JSONValue) > 0 {
			got += " (" + string(sem.JSONValue) + ")"
		}
		return &FieldError{Field: field, Message: fmt.Sprintf("must be %s, got %s", goKindName(sem.GoType), got)}
	}
	return &FieldError{Field: "body", Message: err.Error()}
}

// firstValueWhole reports whether data starts with one whole JSON value.
func firstValueWhole(data []byte) bool {
	dec := jsontext.NewDecoder(bytes.NewBuffer(data), jsontext.AllowDuplicateNames(true))
	return dec.SkipValue() == nil
}

// fieldPathIn writes at, a pointer into data, as a field path; reading
// data up to there tells which of its tokens are array indexes.
func fieldPathIn(data []byte, at jsontext.Pointer) string {
	dec := jsontext.NewDecoder(bytes.NewBuffer(data), jsontext.AllowDuplicateNames(true))
	for dec.StackPointer() != at {
		if _, err := dec.ReadToken(); err != nil {
			break
		}
	}
	return fieldPath(dec, at)
}

// goKindName says what a Go type holds in JSON's words.
func goKindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	}
	return "a " + t.Kind().String()
}

// jsonKindName names a JSON kind as encoding/json did.
func jsonKindName(k jsontext.Kind) string {
	switch k {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "value"
}

// fieldPath writes at, a pointer into the value dec is reading, as a field
// path: "params.lr", "command[0].x". The decoder's stack says which of
// its tokens are array indexes.
func fieldPath(dec *jsontext.Decoder, at jsontext.Pointer) string {
	var b strings.Builder
	level := 0
	for tok := range at.Tokens() {
		level++
		if dec != nil && level <= dec.StackDepth() {
			if kind, _ := dec.StackIndex(level); kind == '[' {
				b.WriteString("[" + tok + "]")
				continue
			}
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(pathSegment(tok))
	}
	return b.String()
}

// pathSegment is how a key shows in a field path; the empty key is written
// "" so that the path still names something.
func pathSegment(key string) string {
	if key == "" {
		return `""`
	}
	return key
}
