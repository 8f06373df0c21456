package jobs

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// RetryOfLabel marks a job made by retrying another, with the ID of the job
// it repeats, so the two can be found from each other.
const RetryOfLabel = "retry_of"

// Resubmission rebuilds the submission a finished job's spec came from,
// for `ballast retry` and the console's retry: same template, parameters,
// team, labels, class and timeout, the RetryOfLabel added, under a fresh
// idempotency key (the old key would only return the old job, and a
// retry repeated after a lost reply is meant to make a second job). The
// spec holds the resolved parameters (defaults filled in), which resolve
// to the same spec again.
func Resubmission(j Job) (Submission, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return Submission{}, err
	}
	timeout := j.Spec.Timeout
	sub := Submission{Template: j.Spec.Template, IdempotencyKey: "retry-" + j.ID + "-" + hex.EncodeToString(b), Team: j.Spec.Team,
		Class: string(j.Spec.Class), Timeout: &timeout, Labels: map[string]string{}}
	if j.Spec.Template == "" {
		sub.Command = append([]string(nil), j.Spec.Command...)
	}
	for k, v := range j.Spec.Labels {
		sub.Labels[k] = v
	}
	if _, ok := sub.Labels[RetryOfLabel]; ok || len(sub.Labels) < MaxLabels {
		sub.Labels[RetryOfLabel] = j.ID
	}
	if len(j.Spec.Params) > 0 {
		sub.Params = make(map[string]json.RawMessage, len(j.Spec.Params))
		for k, v := range j.Spec.Params {
			b, err := json.Marshal(v)
			if err != nil {
				return Submission{}, fmt.Errorf("parameter %s of job %s: %w", k, j.ID, err)
			}
			sub.Params[k] = b
		}
	}
	return sub, nil
}
