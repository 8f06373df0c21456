package jobs

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Control characters in inputs. What a user sends ends up in argv, in a job's
// environment, in Redis keys, in logs and on terminals: a NUL cannot pass
// exec at all, and other control characters (escape sequences, carriage
// returns) can rewrite what an operator's terminal or a log viewer shows.
//
// Per field:
//   - names (template, team, label keys and values, idempotency keys,
//     sweep metric keys): no control character at all;
//   - string parameters and raw command arguments: free text, so tab,
//     newline and carriage return are allowed (a prompt, a multi-line
//     query); NUL and every other control character are not.
//
// Bidirectional formatting characters (the embeddings, overrides and
// isolates of Unicode's bidi algorithm, U+202A to U+202E and U+2066 to
// U+2069) are refused in every field, text included: they are invisible,
// and they reorder what a terminal or a browser shows, so a parameter
// could read as one command in the console and be another in argv (the
// "Trojan Source" trick). The implicit marks (LRM, RLM, ALM) only nudge
// neutral characters and belong in real right-to-left text, so free text
// keeps them; names, which nobody writes in mixed directions, do not.

// Which whitespace controls a field allows.
const (
	// NoControls: names and keys.
	NoControls = ""
	// TextControls: free text (string parameters, raw command arguments).
	TextControls = "\t\n\r"
)

// CheckText returns a message naming the first control character in s that
// allow does not list, or "" when there is none. Control characters are
// C0 (U+0000 to U+001F), DEL and C1 (U+0080 to U+009F); invalid UTF-8 is
// refused too, since it cannot be shown or compared reliably.
func CheckText(s, allow string) string {
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !validAt(s, i):
			return fmt.Sprintf("is not valid UTF-8 at byte %d", i)
		case isControl(r) && !allowed(r, allow):
			return fmt.Sprintf("contains the control character %U at byte %d; %s", r, i, allowedText(allow))
		case isBidiControl(r) || (allow == NoControls && isBidiMark(r)):
			return fmt.Sprintf("contains the bidirectional control character %U at byte %d, which makes text display in another order than it is stored; remove it", r, i)
		}
	}
	return ""
}

// KeyProblem says what is wrong with an idempotency key, "" when nothing
// is: a key is compared byte for byte and shown in logs, so it takes no
// spaces and nothing CheckText refuses in a name.
func KeyProblem(key string) string {
	msg := CheckText(key, NoControls)
	if msg == "" && !strings.Contains(key, " ") {
		return ""
	}
	if msg == "" {
		msg = fmt.Sprintf("contains a space at byte %d", strings.Index(key, " "))
	}
	return "must not contain spaces or control characters: it " + msg
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) }

// isBidiControl: LRE, RLE, PDF, LRO, RLO and LRI, RLI, FSI, PDI.
func isBidiControl(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// isBidiMark: LRM, RLM and the Arabic letter mark.
func isBidiMark(r rune) bool { return r == 0x200e || r == 0x200f || r == 0x061c }

func allowed(r rune, allow string) bool {
	for _, a := range allow {
		if r == a {
			return true
		}
	}
	return false
}

func allowedText(allow string) string {
	if allow == "" {
		return "names take no control characters"
	}
	return "text takes tab, newline and carriage return but no other control characters"
}

// validAt tells a real U+FFFD from a decoding error at byte i.
func validAt(s string, i int) bool {
	r, size := utf8.DecodeRuneInString(s[i:])
	return !(r == utf8.RuneError && size <= 1)
}
