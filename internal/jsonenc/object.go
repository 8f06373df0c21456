package jsonenc

import (
	"encoding/json"
	"strconv"
	"time"
)

// Object writes one JSON object's members in the order given, placing the
// commas, with the omitempty rules of encoding/json for the methods named
// so. The first error (a value encoding/json refuses) is kept and stops
// further writes; Close returns it. Every hand-written encoder of a struct
// writes through one, so each says only which fields it has.
type Object struct {
	b     []byte
	empty bool
	err   error
}

// Open starts an object at the end of b.
func Open(b []byte) *Object { return &Object{b: append(b, '{'), empty: true} }

// key writes a member's name (plain ASCII, as struct tags are) and colon;
// the caller appends the value to Bytes.
func (o *Object) key(name string) {
	o.b = field(o.b, name, o.empty)
	o.empty = false
}

// String writes a string member.
func (o *Object) String(name, v string) {
	if o.err == nil {
		o.key(name)
		o.b = String(o.b, v)
	}
}

// OmitEmpty writes a string member unless it is empty.
func (o *Object) OmitEmpty(name, v string) {
	if v != "" {
		o.String(name, v)
	}
}

// Int writes an integer member.
func (o *Object) Int(name string, v int64) {
	if o.err == nil {
		o.key(name)
		o.b = strconv.AppendInt(o.b, v, 10)
	}
}

// OmitZero writes an integer member unless it is 0.
func (o *Object) OmitZero(name string, v int64) {
	if v != 0 {
		o.Int(name, v)
	}
}

// Bool writes a boolean member.
func (o *Object) Bool(name string, v bool) {
	if o.err == nil {
		o.key(name)
		o.b = strconv.AppendBool(o.b, v)
	}
}

// OmitFalse writes a boolean member unless it is false.
func (o *Object) OmitFalse(name string, v bool) {
	if v {
		o.Bool(name, v)
	}
}

// Float writes a float64 member, unless it is 0 and omit is set.
func (o *Object) Float(name string, v float64, omit bool) {
	if o.err == nil && !(omit && v == 0) {
		o.key(name)
		o.b, o.err = Float(o.b, v)
	}
}

// Strings writes a string array member unless it is empty.
func (o *Object) Strings(name string, v []string) {
	if o.err == nil && len(v) > 0 {
		o.key(name)
		o.b = Strings(o.b, v)
	}
}

// StringMap writes a string map member unless it is empty.
func (o *Object) StringMap(name string, v map[string]string) {
	if o.err == nil && len(v) > 0 {
		o.key(name)
		o.b = StringMap(o.b, v)
	}
}

// RawMap writes a member of raw JSON values unless it is empty (see the
// function RawMap).
func (o *Object) RawMap(name string, v map[string]json.RawMessage) {
	if o.err == nil && len(v) > 0 {
		o.key(name)
		o.b = RawMap(o.b, v)
	}
}

// Map writes a map member unless it is empty.
func (o *Object) Map(name string, v map[string]any) {
	if o.err == nil && len(v) > 0 {
		o.key(name)
		o.b, o.err = Map(o.b, v)
	}
}

// Time writes a time member as encoding/json does (RFC 3339, refused
// outside years 0 to 9999).
func (o *Object) Time(name string, v time.Time) {
	if o.err == nil {
		// AppendText is MarshalJSON without the quotes or a slice of its
		// own: the same strict RFC 3339, refusing the same times.
		mark := len(o.b)
		o.key(name)
		o.b = append(o.b, '"')
		t, err := v.AppendText(o.b)
		if err != nil { // t is nil then
			o.b = o.b[:mark]
			_, o.err = v.MarshalJSON() // the same refusal, in MarshalJSON's words
			if o.err == nil {
				o.err = err
			}
			return
		}
		o.b = append(t, '"')
	}
}

// Marshal writes a member through encoding/json, for the rare and nested
// values not worth writing by hand.
func (o *Object) Marshal(name string, v any) {
	if o.err == nil {
		var j []byte
		if j, o.err = json.Marshal(v); o.err == nil {
			o.key(name)
			o.b = append(o.b, j...)
		}
	}
}

// Close ends the object and returns the bytes, or the first error.
func (o *Object) Close() ([]byte, error) {
	if o.err != nil {
		return nil, o.err
	}
	return append(o.b, '}'), nil
}
