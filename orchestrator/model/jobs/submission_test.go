package jobs

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDecodeSubmissionValidRoundTrips(t *testing.T) {
	in := `{
		"template": "train",
		"params": {"epochs": 20, "lr": 0.5, "name": "a b", "fast": true, "tags": ["x"]},
		"idempotency_key": "k-1",
		"team": "ml",
		"labels": {"env": "prod"},
		"class": "core",
		"timeout": "1h30m",
		"command": ["echo", "hi"]
	}`
	s, err := DecodeSubmission([]byte(in))
	if err != nil {
		t.Fatalf("DecodeSubmission: %v", err)
	}
	timeout := Duration(90 * time.Minute)
	wantSub := Submission{
		Template: "train",
		Params: map[string]json.RawMessage{
			"epochs": json.RawMessage(`20`), "lr": json.RawMessage(`0.5`), "name": json.RawMessage(`"a b"`),
			"fast": json.RawMessage(`true`), "tags": json.RawMessage(`["x"]`),
		},
		IdempotencyKey: "k-1",
		Team:           "ml",
		Labels:         map[string]string{"env": "prod"},
		Class:          "core",
		Timeout:        &timeout,
		Command:        []string{"echo", "hi"},
	}
	if !reflect.DeepEqual(s, wantSub) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", s, wantSub)
	}

	out, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"timeout":"1h30m0s"`) {
		t.Errorf("timeout not written as text: %s", out)
	}
	again, err := DecodeSubmission(out)
	if err != nil {
		t.Fatalf("decoding the re-encoded submission %s: %v", out, err)
	}
	if !reflect.DeepEqual(again, s) {
		t.Errorf("round trip changed the submission:\n%+v\n%+v", again, s)
	}
}

func TestDecodeSubmissionAccepts(t *testing.T) {
	cases := []struct {
		name string
		body string
		want Submission
	}{
		{"minimal", `{"template":"t"}`, Submission{Template: "t"}},
		{"empty object", `{}`, Submission{}},
		{"surrounding whitespace", " \n\t{\"template\":\"t\"}\r\n ", Submission{Template: "t"}},
		{"null timeout", `{"template":"t","timeout":null}`, Submission{Template: "t"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeSubmission([]byte(tc.body))
			if err != nil {
				t.Fatalf("DecodeSubmission(%q): %v", tc.body, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDecodeSubmissionRejects(t *testing.T) {
	cases := []struct {
		name  string
		body  string
		field string
		msg   string
	}{
		{"empty", ``, "body", `empty message; send a JSON object such as {"template":"NAME","params":{}}`},
		{"only whitespace", " \n ", "body", "empty message"},
		{"invalid UTF-8", "{\"template\":\"tr\xffain\"}", "body", "the message is not valid UTF-8"},
		{"syntax error has offset", `{"template": "x",}`, "body", "not valid JSON at byte 18: invalid character '}'"},
		{"syntax error at start", `hello`, "body", "not valid JSON at byte 1"},
		{"truncated", `{"template":`, "body", "unexpected EOF"},
		{"unknown field", `{"template":"t","priority":9}`, "priority",
			"unknown field (known: template, params, idempotency_key, team, labels, class, timeout, command)"},
		{"labels is a number", `{"labels":3}`, "labels", "must be an object, got a JSON number"},
		{"labels value is a number", `{"labels":{"a":3}}`, "labels", "must be a string, got a JSON number"},
		{"template is a number", `{"template":3}`, "template", "must be a string, got a JSON number"},
		{"params is an array", `{"params":[1]}`, "params", "must be an object, got a JSON array"},
		{"command is a string", `{"command":"ls -l"}`, "command", "must be an array, got a JSON string"},
		{"command element is a number", `{"command":["ls",1]}`, "command", "must be a string, got a JSON number"},
		{"timeout is a number", `{"timeout":90}`, "timeout", `a duration must be a string like "30m", not 90`},
		{"timeout is not a duration", `{"timeout":"90"}`, "timeout", `"90" is not a duration (write it like 90s, 30m or 6h)`},
		{"not an object", `[1,2,3]`, "body", "must be an object, got a JSON array"},
		{"a string", `"train"`, "body", "must be an object, got a JSON string"},
		{"two objects", `{"template":"a"}{"template":"b"}`, "body", "extra data after the JSON object; send exactly one object"},
		{"two objects with space", `{"template":"a"} {}`, "body", "send exactly one object"},
		{"object then array", `{} []`, "body", "send exactly one object"},
		{"trailing garbage", `{"template":"a"} x`, "body", "send exactly one object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := DecodeSubmission([]byte(tc.body))
			expectProblems(t, err, want{tc.field, tc.msg})
			if !reflect.DeepEqual(s, Submission{}) {
				t.Errorf("a partial submission was returned with the error: %+v", s)
			}
		})
	}
}

func TestDecodeSubmissionSizeLimit(t *testing.T) {
	prefix := `{"template":"t","labels":{"note":"`
	suffix := `"}}`
	body := func(size int) []byte {
		return []byte(prefix + strings.Repeat("x", size-len(prefix)-len(suffix)) + suffix)
	}

	atLimit := body(MaxSubmissionBytes)
	if len(atLimit) != MaxSubmissionBytes {
		t.Fatalf("test body is %d bytes", len(atLimit))
	}
	s, err := DecodeSubmission(atLimit)
	if err != nil {
		t.Fatalf("a %d-byte submission was refused: %v", MaxSubmissionBytes, err)
	}
	if s.Template != "t" {
		t.Errorf("template = %q", s.Template)
	}

	_, err = DecodeSubmission(body(MaxSubmissionBytes + 1))
	expectProblems(t, err, want{"body", "the message is 65537 bytes; the limit is 65536 (send large inputs by reference"})

	// The size is checked before anything else: even garbage gets the size error.
	_, err = DecodeSubmission([]byte(strings.Repeat("\xff", MaxSubmissionBytes+1)))
	expectProblems(t, err, want{"body", "the limit is 65536"})
}

func TestDecodeThenResolve(t *testing.T) {
	cat := testCatalog(t)
	s, err := DecodeSubmission([]byte(`{"template":"train","params":{"epochs":1e1,"path":"; rm -rf /"},"timeout":"2h","labels":{"env":"ci"}}`))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := cat.Resolve(s)
	if err != nil {
		t.Fatal(err)
	}
	if spec.Params["epochs"] != int64(10) || spec.Command[2] != "--epochs=10" {
		t.Errorf("epochs = %#v, argv[2] = %q", spec.Params["epochs"], spec.Command[2])
	}
	if spec.Command[5] != "--data=s3://data/; rm -rf /" {
		t.Errorf("argv[5] = %q", spec.Command[5])
	}
	if spec.Timeout.Std() != 2*time.Hour {
		t.Errorf("timeout = %s", spec.Timeout)
	}
}
