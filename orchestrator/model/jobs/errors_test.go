package jobs

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// want names one expected problem: its exact field path and a part of its message.
type want struct {
	field string
	msg   string
}

// problemsOf returns the problems of a *ValidationError and fails the test for
// any other error (including nil).
func problemsOf(t *testing.T, err error) []*FieldError {
	t.Helper()
	if err == nil {
		t.Fatal("got no error, want a *ValidationError")
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v (%T) is not a *ValidationError", err, err)
	}
	if len(ve.Problems) == 0 {
		t.Fatalf("ValidationError without problems: %v", err)
	}
	return ve.Problems
}

func describeProblems(ps []*FieldError) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "\n\t%s: %s", p.Field, p.Message)
	}
	return b.String()
}

// expectProblems checks that err holds exactly the wanted problems, in any order.
func expectProblems(t *testing.T, err error, wants ...want) {
	t.Helper()
	if len(wants) == 0 {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	ps := problemsOf(t, err)
	for _, w := range wants {
		if !hasProblem(ps, w) {
			t.Errorf("missing problem %s (message containing %q); got:%s", w.field, w.msg, describeProblems(ps))
		}
	}
	if len(ps) != len(wants) {
		t.Errorf("got %d problems, want %d:%s", len(ps), len(wants), describeProblems(ps))
	}
}

func hasProblem(ps []*FieldError, w want) bool {
	for _, p := range ps {
		if p.Field == w.field && strings.Contains(p.Message, w.msg) {
			return true
		}
	}
	return false
}

func TestFieldErrorError(t *testing.T) {
	e := &FieldError{Field: "params.epochs", Message: "must be an integer"}
	if got, wantS := e.Error(), "params.epochs: must be an integer"; got != wantS {
		t.Errorf("Error() = %q, want %q", got, wantS)
	}
	if e.Unwrap() != nil {
		t.Errorf("Unwrap() = %v, want nil without a sentinel", e.Unwrap())
	}
	withSentinel := &FieldError{Field: "template", Message: "x", Err: ErrUnknownTemplate}
	if !errors.Is(withSentinel, ErrUnknownTemplate) {
		t.Error("errors.Is(FieldError with sentinel, ErrUnknownTemplate) = false")
	}
	if errors.Is(e, ErrUnknownTemplate) {
		t.Error("errors.Is(FieldError without sentinel, ErrUnknownTemplate) = true")
	}
}

func TestValidationErrorListsEveryProblem(t *testing.T) {
	ve := &ValidationError{Problems: []*FieldError{
		{Field: "template", Message: "unknown template \"x\"", Err: ErrUnknownTemplate},
		{Field: "params.epochs", Message: "must be an integer"},
		{Field: "labels.a b", Message: "bad key"},
	}}
	wantS := `invalid input: template: unknown template "x"; params.epochs: must be an integer; labels.a b: bad key`
	if got := ve.Error(); got != wantS {
		t.Errorf("Error() =\n%q\nwant\n%q", got, wantS)
	}
	unwrapped := ve.Unwrap()
	if len(unwrapped) != 3 {
		t.Fatalf("Unwrap() returned %d errors, want 3", len(unwrapped))
	}
	for i, u := range unwrapped {
		if u != error(ve.Problems[i]) {
			t.Errorf("Unwrap()[%d] = %v, want problem %d", i, u, i)
		}
	}
}

func TestValidationErrorAsAndIs(t *testing.T) {
	var err error = &ValidationError{Problems: []*FieldError{
		{Field: "params.epochs", Message: "must be an integer"},
		{Field: "template", Message: "unknown", Err: ErrUnknownTemplate},
	}}
	// Wrapped once more, as a caller might.
	err = fmt.Errorf("submit: %w", err)

	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatal("errors.As(err, *FieldError) = false")
	}
	if fe.Field != "params.epochs" {
		t.Errorf("errors.As found field %q, want the first problem params.epochs", fe.Field)
	}
	if !errors.Is(err, ErrUnknownTemplate) {
		t.Error("errors.Is(err, ErrUnknownTemplate) = false; the second problem carries it")
	}
	if errors.Is(err, ErrNotFound) {
		t.Error("errors.Is(err, ErrNotFound) = true")
	}
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) != 2 {
		t.Errorf("errors.As(err, *ValidationError) did not find both problems: %v", ve)
	}
}

func TestValidationErrorJSON(t *testing.T) {
	ve := &ValidationError{Problems: []*FieldError{
		{Field: "template", Message: "unknown", Err: ErrUnknownTemplate},
	}}
	b, err := json.Marshal(ve)
	if err != nil {
		t.Fatal(err)
	}
	wantS := `{"problems":[{"field":"template","message":"unknown"}]}`
	if string(b) != wantS {
		t.Errorf("JSON = %s, want %s (the sentinel must not leak)", b, wantS)
	}
}

func TestProblemsErrNilWhenEmpty(t *testing.T) {
	var ps problems
	if err := ps.err(); err != nil {
		t.Fatalf("empty problems: err() = %v (%T), want a nil interface", err, err)
	}
	ps.add("a", "first")
	ps.addErr("b", "second", ErrUnknownTemplate)
	err := ps.err()
	expectProblems(t, err, want{"a", "first"}, want{"b", "second"})
	if !errors.Is(err, ErrUnknownTemplate) {
		t.Error("addErr sentinel not visible to errors.Is")
	}
}
