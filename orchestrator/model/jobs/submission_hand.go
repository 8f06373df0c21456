package jobs

import (
	"encoding/json"
	"unicode/utf8"
)

// decodeSubmissionHand reads, without reflection, the form nearly every
// client sends: an object of template, idempotency_key, team, class and
// timeout as strings without escapes, and params whose values are such
// strings, numbers, true, false or null. For that form it gives what
// json.Unmarshal gives (FuzzQuickSubmissionIsStrict holds it to the strict
// decoder). Anything else (an escape, labels, command, slots, a nested
// param, a repeated or unknown key) gives ok false, and the JSON library
// reads it and names its problem. A batch decodes thousands of these.
// Hand-written JSON, kept because it reads this form faster than the
// library: BenchmarkJSONLibraryDecodeSubmission.
func decodeSubmissionHand(data []byte) (s Submission, ok bool) {
	p := handScan{data: data}
	p.ws()
	if !p.next('{') {
		return Submission{}, false
	}
	var seen uint8
	p.ws()
	if !p.next('}') {
		for {
			p.ws()
			key, kok := p.plain()
			p.ws()
			if !kok || !p.next(':') {
				return Submission{}, false
			}
			p.ws()
			var bit uint8
			switch string(key) {
			case "template":
				bit = 1
				s.Template, ok = p.str()
			case "idempotency_key":
				bit = 2
				s.IdempotencyKey, ok = p.str()
			case "team":
				bit = 4
				s.Team, ok = p.str()
			case "class":
				bit = 8
				s.Class, ok = p.str()
			case "params":
				bit = 16
				s.Params, ok = p.params()
			case "timeout":
				// Duration.UnmarshalJSON unquotes, then reads the text.
				bit = 32
				var text []byte
				if text, ok = p.plain(); ok {
					s.Timeout = new(Duration)
					ok = s.Timeout.UnmarshalText(text) == nil
				}
			}
			if !ok || bit == 0 || seen&bit != 0 {
				return Submission{}, false
			}
			seen |= bit
			p.ws()
			if p.next(',') {
				continue
			}
			if p.next('}') {
				break
			}
			return Submission{}, false
		}
	}
	p.ws()
	if p.i != len(p.data) {
		return Submission{}, false
	}
	return s, true
}

// handScan walks the input of decodeSubmissionHand.
type handScan struct {
	data []byte
	i    int
}

func (p *handScan) ws() { p.i = skipSpace(p.data, p.i) }

// next consumes c if it comes next.
func (p *handScan) next(c byte) bool {
	if p.i < len(p.data) && p.data[p.i] == c {
		p.i++
		return true
	}
	return false
}

// plain reads a string without escapes or control characters, valid
// UTF-8, and returns what is between its quotes.
func (p *handScan) plain() ([]byte, bool) {
	if !p.next('"') {
		return nil, false
	}
	start, ascii := p.i, true
	for p.i < len(p.data) {
		c := p.data[p.i]
		switch {
		case c == '"':
			s := p.data[start:p.i]
			p.i++
			// encoding/json would replace invalid bytes with U+FFFD.
			return s, ascii || utf8.Valid(s)
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
		p.i++
	}
	return nil, false
}

func (p *handScan) str() (string, bool) {
	s, ok := p.plain()
	return string(s), ok
}

// params reads an object of scalar values, each kept as its JSON text.
func (p *handScan) params() (map[string]json.RawMessage, bool) {
	if !p.next('{') {
		return nil, false
	}
	m := map[string]json.RawMessage{}
	p.ws()
	if p.next('}') {
		return m, true
	}
	for {
		p.ws()
		key, ok := p.plain()
		p.ws()
		if !ok || !p.next(':') {
			return nil, false
		}
		p.ws()
		raw, ok := p.scalar()
		if !ok {
			return nil, false
		}
		if _, dup := m[string(key)]; dup {
			return nil, false
		}
		m[string(key)] = append(json.RawMessage(nil), raw...)
		p.ws()
		if p.next(',') {
			continue
		}
		return m, p.next('}')
	}
}

// scalar reads a plain string, a number, true, false or null and returns
// its text.
func (p *handScan) scalar() ([]byte, bool) {
	start := p.i
	if p.i >= len(p.data) {
		return nil, false
	}
	switch c := p.data[p.i]; {
	case c == '"':
		_, ok := p.plain()
		return p.data[start:p.i], ok
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return nil, false
}

func (p *handScan) literal(word string) ([]byte, bool) {
	return p.upTo(scanLiteral(p.data, p.i, word))
}

func (p *handScan) number() ([]byte, bool) { return p.upTo(scanNumber(p.data, p.i)) }

// upTo consumes the text up to end, when a scan found it, and returns it.
func (p *handScan) upTo(end int, ok bool) ([]byte, bool) {
	if !ok {
		return nil, false
	}
	text := p.data[p.i:end]
	p.i = end
	return text, true
}

// skipSpace is the index of the first byte at or after i in data that is
// not JSON white space.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// scanLiteral is the end of word at data[i:]; ok is false when word is
// not there.
func scanLiteral(data []byte, i int, word string) (int, bool) {
	if len(data)-i < len(word) || string(data[i:i+len(word)]) != word {
		return i, false
	}
	return i + len(word), true
}

// scanNumber is the end of the JSON number at data[i:],
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; ok is false when there is
// none, or when it does not end where a value may ("01" and "1x" are not
// JSON).
func scanNumber(data []byte, i int) (int, bool) {
	digits := func() int {
		n := 0
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
			n++
		}
		return n
	}
	at := func(c byte) bool { return i < len(data) && data[i] == c }
	if at('-') {
		i++
	}
	switch {
	case at('0'):
		i++
	case digits() == 0:
		return i, false
	}
	if at('.') {
		i++
		if digits() == 0 {
			return i, false
		}
	}
	if at('e') || at('E') {
		i++
		if at('+') || at('-') {
			i++
		}
		if digits() == 0 {
			return i, false
		}
	}
	if i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n', ',', '}', ']':
		default:
			return i, false
		}
	}
	return i, true
}
