package client_test

import (
	"errors"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func TestErrorIsAndAs(t *testing.T) {
	for _, tc := range []struct {
		code          intake.Code
		unavailable   bool
		conflict      bool
		tooLarge      bool
		validationErr bool
	}{
		{intake.CodeInvalid, false, false, false, true},
		{intake.CodeTooLarge, false, false, true, true},
		{intake.CodeUnavailable, true, false, false, false},
		{intake.CodeConflict, false, true, false, false},
		{intake.CodeUnauthorized, false, false, false, false},
		{intake.CodeInternal, false, false, false, false},
	} {
		var err error = &client.Error{Code: tc.code, Message: "m"}
		if got := errors.Is(err, jobs.ErrUnavailable); got != tc.unavailable {
			t.Errorf("%s: Is(ErrUnavailable) = %v", tc.code, got)
		}
		if got := errors.Is(err, jobs.ErrIdempotencyConflict); got != tc.conflict {
			t.Errorf("%s: Is(ErrIdempotencyConflict) = %v", tc.code, got)
		}
		if got := errors.Is(err, intake.ErrTooLarge); got != tc.tooLarge {
			t.Errorf("%s: Is(ErrTooLarge) = %v", tc.code, got)
		}
		var ve *jobs.ValidationError
		if got := errors.As(err, &ve); got != tc.validationErr {
			t.Errorf("%s: As(ValidationError) = %v", tc.code, got)
		}
		if tc.validationErr && (len(ve.Problems) != 1 || ve.Problems[0].Field != "body") {
			t.Errorf("%s: a problem-less error gives %+v", tc.code, ve)
		}
	}
}

func TestErrorAsDoesNotShareProblems(t *testing.T) {
	e := &client.Error{Code: intake.CodeInvalid, Problems: []*jobs.FieldError{{Field: "team", Message: "bad"}}}
	var ve *jobs.ValidationError
	if !errors.As(e, &ve) {
		t.Fatal("no ValidationError")
	}
	ve.Problems[0].Message = "changed"
	if e.Problems[0].Message != "bad" {
		t.Fatal("changing the ValidationError changed the Error")
	}
	e.Message = "fix the fields"
	if got, want := e.Error(), "ballast invalid: fix the fields: team: bad"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}
