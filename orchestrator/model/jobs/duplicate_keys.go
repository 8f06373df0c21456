package jobs

import (
	"bytes"
	"errors"
	"strings"
	"unicode"

	"github.com/go-json-experiment/json/jsontext"
)

// DuplicateKey finds the first object key that appears twice in one object
// of data and returns a problem naming it by path ("params.lr",
// "space.list[2].lr"), or nil. encoding/json keeps the last of duplicated
// keys without a word, so {"team":"a","team":"b"} would be read as team b
// while a proxy, a log or a signature check in front of Ballast saw team a.
//
// Struct fields match keys case-insensitively in encoding/json ("Team"
// sets team), so keys of such objects are compared folded; keys of maps,
// where "A" and "a" are different entries, are compared as they are.
// exact reports whether the object at path is a map. Invalid JSON yields
// nil: the decoder that runs next reports it with its position.
//
// Submissions are decoded by the JSON library, which checks this itself;
// sweep specs, decoded by encoding/json, are checked here.
func DuplicateKey(data []byte, exact func(path string) bool) *FieldError {
	if fe, ok := quickDuplicateKey(data, exact); ok {
		return fe
	}
	return walkDuplicateKeys(data, exact)
}

// walkDuplicateKeys is DuplicateKey over the JSON library's tokens, for
// any input. The tokenizer itself refuses a key repeated exactly; the
// keys of objects that are no map are compared folded here.
func walkDuplicateKeys(data []byte, exact func(path string) bool) *FieldError {
	dec := jsontext.NewDecoder(bytes.NewBuffer(data))
	var seen []map[string]bool // per open object, its folded keys; nil for a map
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			var se *jsontext.SyntacticError
			if errors.As(err, &se) && errors.Is(se.Err, jsontext.ErrDuplicateName) {
				return &FieldError{Field: fieldPath(dec, se.JSONPointer), Message: duplicateKeyMessage}
			}
			return nil // invalid JSON, for the decoder to report
		}
		switch tok.Kind() {
		case '{':
			var keys map[string]bool
			if !exact(fieldPath(dec, dec.StackPointer())) {
				keys = map[string]bool{}
			}
			seen = append(seen, keys)
		case '}':
			seen = seen[:len(seen)-1]
		case '"':
			// A key is an object's odd token; a string value needs nothing.
			if kind, n := dec.StackIndex(dec.StackDepth()); kind == '{' && n%2 == 1 && seen[len(seen)-1] != nil {
				key := strings.Map(foldRune, tok.String())
				if seen[len(seen)-1][key] {
					return &FieldError{Field: fieldPath(dec, dec.StackPointer()), Message: duplicateKeyMessage}
				}
				seen[len(seen)-1][key] = true
			}
		}
		if dec.StackDepth() == 0 {
			return nil // the first value is read; what follows is the decoder's to refuse
		}
	}
}

// foldRune maps r so that two keys encoding/json takes for the same
// struct field ("Team" and "team", "ſ" and "s", the Kelvin sign and "k")
// map alike: to the lower case of the first letter of its case orbit.
func foldRune(r rune) rune {
	first := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		first = min(first, f)
	}
	return unicode.ToLower(first)
}

const duplicateKeyMessage = "the key appears twice in one object (JSON readers disagree on which one counts); send it once"

// submissionMaps are the objects of a Submission that are maps.
func submissionMaps(path string) bool { return path == "params" || path == "labels" }
