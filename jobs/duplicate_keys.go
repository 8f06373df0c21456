package jobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// maxJSONDepth bounds the nesting DuplicateKey walks, as encoding/json
// bounds its own; deeper input is left to the decoder to refuse.
const maxJSONDepth = 10000

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
func DuplicateKey(data []byte, exact func(path string) bool) *FieldError {
	if fe, ok := quickDuplicateKey(data, exact); ok {
		return fe
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // numbers are only skipped; no need to parse them
	fe, _ := walkJSON(dec, "", 0, exact)
	return fe
}

// walkJSON reads one value; err is a syntax error or the depth limit.
func walkJSON(dec *json.Decoder, path string, depth int, exact func(string) bool) (*FieldError, error) {
	if depth > maxJSONDepth {
		return nil, errTooDeep
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		fold := !exact(path)
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, _ := kt.(string)
			child := pathSegment(key)
			if path != "" {
				child = path + "." + child
			}
			norm := key
			if fold {
				// Upper then lower folds what encoding/json folds,
				// such as "ſ" with "s" and the Kelvin sign with "k".
				norm = strings.ToLower(strings.ToUpper(key))
			}
			if seen[norm] {
				return &FieldError{Field: child, Message: "the key appears twice in one object (JSON readers disagree on which one counts); send it once"}, nil
			}
			seen[norm] = true
			if fe, err := walkJSON(dec, child, depth+1, exact); fe != nil || err != nil {
				return fe, err
			}
		}
		_, err = dec.Token() // '}'
		return nil, err
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if fe, err := walkJSON(dec, path+"["+strconv.Itoa(i)+"]", depth+1, exact); fe != nil || err != nil {
				return fe, err
			}
		}
		_, err = dec.Token() // ']'
		return nil, err
	}
	return nil, nil
}

// pathSegment is how a key shows in a field path; the empty key is written
// "" so that the path still names something.
func pathSegment(key string) string {
	if key == "" {
		return `""`
	}
	return key
}

var errTooDeep = errors.New("nested too deeply")

// submissionMaps are the objects of a Submission that are maps.
func submissionMaps(path string) bool { return path == "params" || path == "labels" }
