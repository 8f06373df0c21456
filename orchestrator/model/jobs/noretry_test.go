package jobs

import (
	"strings"
	"testing"
)

func TestNoRetryExitCodesStopRetries(t *testing.T) {
	s := Spec{Retryable: true, MaxRetries: 3, NoRetryExitCodes: []int{2, 64}}
	code := func(c int) *int { return &c }
	for _, c := range []struct {
		code    *int
		retries int
		want    bool
	}{
		{code(1), 0, true},   // an ordinary failure is retried
		{code(2), 0, false},  // listed: the job said a retry will not help
		{code(64), 2, false}, // listed, retries left or not
		{nil, 0, true},       // killed or timed out: no code to judge by
		{code(1), 3, false},  // retries used up
	} {
		if got := s.Retries(c.code, c.retries); got != c.want {
			t.Errorf("code %v after %d retries: %v, want %v", c.code, c.retries, got, c.want)
		}
	}
	if (Spec{MaxRetries: 3}).Retries(code(1), 0) {
		t.Error("a job that is not retryable was retried")
	}
}

func TestNoRetryExitCodesValidation(t *testing.T) {
	err := Template{Command: []string{"x"}, NoRetryExitCodes: []int{3}}.Validate("templates.t")
	if err == nil || !strings.Contains(err.Error(), "templates.t.no_retry_exit_codes") || !strings.Contains(err.Error(), "retryable: true") {
		t.Errorf("codes without retryable: %v", err)
	}
	err = Template{Command: []string{"x"}, Retryable: true, NoRetryExitCodes: []int{0, 256, 7}}.Validate("templates.t")
	if err == nil || !strings.Contains(err.Error(), "no_retry_exit_codes[0]") || !strings.Contains(err.Error(), "no_retry_exit_codes[1]") ||
		strings.Contains(err.Error(), "no_retry_exit_codes[2]") {
		t.Errorf("codes out of range: %v", err)
	}
	cat, err := NewCatalog(map[string]Template{"t": {Command: []string{"x"}, Retryable: true, NoRetryExitCodes: []int{7}}})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := cat.Resolve(Submission{Template: "t"})
	if err != nil || len(spec.NoRetryExitCodes) != 1 || spec.NoRetryExitCodes[0] != 7 {
		t.Errorf("spec %+v %v: the codes must travel with the job", spec.NoRetryExitCodes, err)
	}
}
