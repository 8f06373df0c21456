package jobs

// Hand-written JSON, kept because it is faster than the JSON library doing
// the same check: BenchmarkJSONLibraryDuplicateKey (json_library_test.go).

import "strconv"

// fastDupDepth bounds the nesting the fast scan follows; deeper input goes
// to the library's walk.
const fastDupDepth = 64

// quickDuplicateKey is DuplicateKey without a tokenizer, for the input it
// can judge exactly as the JSON library's walk does: valid JSON whose keys
// are ASCII without escapes (folding them is then plain ASCII case
// folding). ok is false for anything else, and DuplicateKey then walks the
// input with the library. It stays while it is the faster of the two:
// BenchmarkJSONLibraryDuplicateKey.
func quickDuplicateKey(data []byte, exact func(path string) bool) (fe *FieldError, ok bool) {
	d := dupScan{data: data, exact: exact}
	fe = d.value("", 0)
	return fe, !d.bail
}

// dupScan reads one JSON value from data[i:]; bail is set when the input
// is beyond it, and the scan result is then void.
type dupScan struct {
	data  []byte
	i     int
	exact func(string) bool
	bail  bool
}

func (d *dupScan) ws() { d.i = skipSpace(d.data, d.i) }

// peek is the next byte after white space, or 0 at the end.
func (d *dupScan) peek() byte {
	d.ws()
	if d.i >= len(d.data) {
		return 0
	}
	return d.data[d.i]
}

// child names the value at path's key or index, built only for a value
// that is itself an object or an array: scalars need no path.
func (d *dupScan) child(path, seg string, index bool) string {
	if c := d.peek(); c != '{' && c != '[' {
		return ""
	}
	if path == "" || index {
		return path + seg
	}
	return path + "." + seg
}

func (d *dupScan) value(path string, depth int) *FieldError {
	if depth > fastDupDepth {
		d.bail = true
		return nil
	}
	switch d.peek() {
	case '{':
		return d.object(path, depth)
	case '[':
		d.i++
		if d.peek() == ']' {
			d.i++
			return nil
		}
		for n := 0; ; n++ {
			if fe := d.value(d.child(path, "["+strconv.Itoa(n)+"]", true), depth+1); fe != nil || d.bail {
				return fe
			}
			switch d.peek() {
			case ',':
				d.i++
			case ']':
				d.i++
				return nil
			default:
				d.bail = true
				return nil
			}
		}
	case '"':
		d.str(false)
	case 't':
		d.lit("true")
	case 'f':
		d.lit("false")
	case 'n':
		d.lit("null")
	default:
		d.number()
	}
	return nil
}

func (d *dupScan) object(path string, depth int) *FieldError {
	d.i++ // '{'
	fold := !d.exact(path)
	var keysArr [16][]byte
	keys := keysArr[:0]
	if d.peek() == '}' {
		d.i++
		return nil
	}
	for {
		if d.peek() != '"' {
			d.bail = true
			return nil
		}
		key := d.str(true)
		if d.bail {
			return nil
		}
		if d.peek() != ':' {
			d.bail = true
			return nil
		}
		d.i++
		for _, k := range keys {
			if sameKey(k, key, fold) {
				name := pathSegment(string(key))
				if path != "" {
					name = path + "." + name
				}
				return &FieldError{Field: name, Message: duplicateKeyMessage}
			}
		}
		keys = append(keys, key)
		seg := string(key)
		if len(key) == 0 {
			seg = pathSegment("")
		}
		if fe := d.value(d.child(path, seg, false), depth+1); fe != nil || d.bail {
			return fe
		}
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return nil
		default:
			d.bail = true
			return nil
		}
	}
}

// sameKey compares two ASCII keys, folded or not.
func sameKey(a, b []byte, fold bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if fold {
			x, y = lowerASCII(x), lowerASCII(y)
		}
		if x != y {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// str reads a string at d.i and returns its raw contents. A key (asKey)
// with an escape or a byte outside ASCII bails, and so does a control
// character anywhere, which JSON forbids.
func (d *dupScan) str(asKey bool) []byte {
	d.i++ // '"'
	start := d.i
	for d.i < len(d.data) {
		c := d.data[d.i]
		switch {
		case c == '"':
			d.i++
			return d.data[start : d.i-1]
		case c < 0x20, asKey && (c == '\\' || c >= 0x80):
			d.bail = true
			return nil
		case c == '\\':
			if d.i+1 >= len(d.data) {
				d.bail = true
				return nil
			}
			switch d.data[d.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				d.i += 2
			case 'u':
				if d.i+6 > len(d.data) || !isHex4(d.data[d.i+2:d.i+6]) {
					d.bail = true
					return nil
				}
				d.i += 6
			default:
				d.bail = true
				return nil
			}
		default:
			d.i++
		}
	}
	d.bail = true
	return nil
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

func (d *dupScan) lit(s string) {
	var ok bool
	if d.i, ok = scanLiteral(d.data, d.i, s); !ok {
		d.bail = true
	}
}

func (d *dupScan) number() {
	var ok bool
	if d.i, ok = scanNumber(d.data, d.i); !ok {
		d.bail = true
	}
}
