package jobs

import "testing"

func TestControlCharacters(t *testing.T) {
	cat, err := NewCatalog(map[string]Template{
		"t": {Command: []string{"run", "${text}"}, Params: map[string]ParamSpec{"text": {Type: ParamString}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cat.AllowRaw = true
	cases := []struct {
		name  string
		sub   Submission
		wants []want
	}{
		{"newline and tab in a string parameter", Submission{Template: "t", Params: raw(t, "text", "line 1\n\tline 2\r\n")}, nil},
		{"NUL in a string parameter", Submission{Template: "t", Params: raw(t, "text", "a\x00b")},
			[]want{{"params.text", "control character U+0000 at byte 1"}}},
		{"escape in a string parameter", Submission{Template: "t", Params: raw(t, "text", "\x1b[2J")},
			[]want{{"params.text", "U+001B"}}},
		{"C1 control in a string parameter", Submission{Template: "t", Params: raw(t, "text", "a\u009bb")},
			[]want{{"params.text", "U+009B"}}},
		{"NUL in the template name", Submission{Template: "t\x00"},
			[]want{{"template", "U+0000"}, {"template", "unknown template"}}},
		{"newline in a label value", Submission{Template: "t", Labels: map[string]string{"exp": "a\nb"}},
			[]want{{"labels.exp", "U+000A"}}},
		{"tab in an idempotency key", Submission{Template: "t", IdempotencyKey: "k\t1"},
			[]want{{"idempotency_key", "control character U+0009"}}},
		{"C1 in an idempotency key", Submission{Template: "t", IdempotencyKey: "k\u0085"},
			[]want{{"idempotency_key", "control character U+0085"}}},
		{"control in a team", Submission{Template: "t", Team: "ml\x7f"},
			[]want{{"team", "lower-case"}}},
		{"NUL in a raw argument", Submission{Command: []string{"echo", "a\x00"}},
			[]want{{"command[1]", "U+0000"}}},
		{"newline in a raw argument", Submission{Command: []string{"echo", "a\nb"}}, nil},
		{"right-to-left override in a string parameter", Submission{Template: "t", Params: raw(t, "text", "txt.exe\u202Egnp")},
			[]want{{"params.text", "bidirectional control character U+202E at byte 7"}}},
		{"isolate in a string parameter", Submission{Template: "t", Params: raw(t, "text", "a\u2066b\u2069")},
			[]want{{"params.text", "U+2066"}}},
		{"right-to-left mark in Hebrew text", Submission{Template: "t", Params: raw(t, "text", "\u05e9\u05dc\u05d5\u05dd\u200f 1")}, nil},
		{"right-to-left mark in a label value", Submission{Template: "t", Labels: map[string]string{"exp": "a\u200fb"}},
			[]want{{"labels.exp", "U+200F"}}},
		{"embedding in an idempotency key", Submission{Template: "t", IdempotencyKey: "k\u202b1"},
			[]want{{"idempotency_key", "bidirectional control character U+202B"}}},
		{"override in a raw argument", Submission{Command: []string{"echo", "\u202d"}},
			[]want{{"command[1]", "U+202D"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := cat.Resolve(c.sub)
			expectProblems(t, err, c.wants...)
		})
	}
}
