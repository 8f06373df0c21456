package jobs

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

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
// any input.
func walkDuplicateKeys(data []byte, exact func(path string) bool) *FieldError {
	dec := dupDecoders.Get().(*jsontext.Decoder)
	defer dupDecoders.Put(dec)
	dec.Reset(bytes.NewBuffer(data))
	// The open objects, and the keys so far of those that are no map,
	// folded, back to back in arena; all on the stack for a submission.
	var framesArr [8]foldFrame
	var namesArr [32][2]int
	var arenaArr [512]byte
	frames, names, arena := framesArr[:0], namesArr[:0], arenaArr[:0]
	for {
		if depth := dec.StackDepth(); depth > 0 {
			// A key of an object that is no map, read as raw text:
			// folded into arena, it needs no string of its own.
			if kind, n := dec.StackIndex(depth); kind == '{' && n%2 == 0 && frames[len(frames)-1].fold && dec.PeekKind() == '"' {
				raw, err := dec.ReadValue()
				if err != nil {
					return duplicateKeyIn(dec, err)
				}
				f := &frames[len(frames)-1]
				start := len(arena)
				arena, _ = jsontext.AppendUnquote(arena, raw) // raw is valid: the decoder read it
				arena = foldKey(arena, start)
				if f.seen(names, arena, start) {
					return &FieldError{Field: fieldPath(dec, dec.StackPointer()), Message: duplicateKeyMessage}
				}
				names = f.add(names, arena, start)
				continue
			}
		}
		tok, err := dec.ReadToken()
		if err != nil {
			return duplicateKeyIn(dec, err)
		}
		switch tok.Kind() {
		case '{':
			fold := !exact(fieldPath(dec, dec.StackPointer()))
			frames = append(frames, foldFrame{fold: fold, names: len(names), arena: len(arena)})
		case '}':
			f := frames[len(frames)-1]
			frames, names, arena = frames[:len(frames)-1], names[:f.names], arena[:f.arena]
		}
		if dec.StackDepth() == 0 {
			return nil // the first value is read; what follows is the decoder's to refuse
		}
	}
}

// dupDecoders keep walkDuplicateKeys from building a decoder, most of what a
// walk would cost, for every message.
var dupDecoders = sync.Pool{New: func() any { return new(jsontext.Decoder) }}

// duplicateKeyIn is walkDuplicateKeys' answer when dec met err: the tokenizer
// refuses a key repeated exactly; anything else is invalid JSON, for the
// decoder to report.
func duplicateKeyIn(dec *jsontext.Decoder, err error) *FieldError {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) && errors.Is(se.Err, jsontext.ErrDuplicateName) {
		return &FieldError{Field: fieldPath(dec, se.JSONPointer), Message: duplicateKeyMessage}
	}
	return nil
}

// foldFrame is one open object for walkDuplicateKeys: whether its keys are
// folded (it is no map), and where its keys start in names and arena.
// Its keys are compared one by one while there are few; a large object's
// are kept in a set.
type foldFrame struct {
	fold         bool
	names, arena int
	set          map[string]bool
}

// seen reports whether the key at arena[start:] is one of f's.
func (f *foldFrame) seen(names [][2]int, arena []byte, start int) bool {
	key := arena[start:]
	if f.set != nil {
		return f.set[string(key)]
	}
	for _, n := range names[f.names:] {
		if bytes.Equal(arena[n[0]:n[1]], key) {
			return true
		}
	}
	return false
}

// add records the key at arena[start:] as one of f's.
func (f *foldFrame) add(names [][2]int, arena []byte, start int) [][2]int {
	if f.set == nil && len(names)-f.names < 32 {
		return append(names, [2]int{start, len(arena)})
	}
	if f.set == nil {
		f.set = map[string]bool{}
		for _, n := range names[f.names:] {
			f.set[string(arena[n[0]:n[1]])] = true
		}
	}
	f.set[string(arena[start:])] = true
	return names
}

// foldKey folds the key at b[start:] in place, so that two keys
// encoding/json takes for the same struct field ("Team" and "team", "ſ"
// and "s", the Kelvin sign and "k") fold alike: each letter becomes the
// lower case of the first of its case orbit.
func foldKey(b []byte, start int) []byte {
	key := b[start:]
	for i, c := range key {
		if c >= utf8.RuneSelf {
			folded := strings.Map(foldRune, string(key))
			return append(b[:start], folded...)
		}
		if 'A' <= c && c <= 'Z' {
			key[i] = c + 'a' - 'A'
		}
	}
	return b
}

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
