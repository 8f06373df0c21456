package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/ballastdev/ballast/jobs"
	"github.com/ballastdev/ballast/orchestrator/client"
)

// retryOfLabel marks a job `ballast retry` made, with the ID of the job it
// repeats, so the two can be found from each other.
const retryOfLabel = "retry_of"

// runRetry submits a new job from a finished job's spec: same template,
// parameters, team, labels, class and timeout, under a fresh idempotency
// key (the old key would only return the old job). A job that has not
// finished is refused: a second copy of it would run beside it.
func runRetry(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "retry", "retry [--config FILE] [--wait] ID")
	cfgPath := configFlag(fs)
	wait := fs.Bool("wait", false, "follow the new job until it ends, as submit --wait does")
	out := outputFlag(fs)
	if err := parseArgs(fs, args, out, 1, "give exactly one job ID: ballast retry ID"); err != nil {
		return err
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		return err
	}
	store, closeStore, err := storeFor(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeStore()
	old, err := store.Get(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	if !old.State.Terminal() {
		return fmt.Errorf("job %s is still %s: only a finished job can be retried (cancel it first with ballast cancel %s, or wait for it)",
			old.ID, old.State, old.ID)
	}
	sub, err := resubmission(old)
	if err != nil {
		return err
	}
	nc, err := connectNATS(cfg, "ballast-retry")
	if err != nil {
		return err
	}
	defer nc.Close()
	receipt, err := client.NewNATS(nc, subjects(cfg)).Submit(ctx, sub)
	if err != nil {
		return explain(err)
	}
	if *out == "table" {
		fmt.Fprintf(e.out, "retry of %s (%s): ", old.ID, old.State)
	}
	if err := printReceipt(e, *out, receipt); err != nil || !*wait {
		return err
	}
	return waitResult(ctx, e, cfg, receipt.JobID, follow(ctx, e, nc, cfg.NATS.Stream, subjects(cfg), receipt.JobID, *out))
}

// resubmission rebuilds the submission a job's spec came from. The spec
// holds the resolved parameters (defaults filled in), which resolve to the
// same spec again.
func resubmission(j jobs.Job) (jobs.Submission, error) {
	key, err := freshKey(j.ID)
	if err != nil {
		return jobs.Submission{}, err
	}
	timeout := j.Spec.Timeout
	sub := jobs.Submission{Template: j.Spec.Template, IdempotencyKey: key, Team: j.Spec.Team,
		Class: string(j.Spec.Class), Timeout: &timeout, Labels: map[string]string{}}
	if j.Spec.Template == "" {
		sub.Command = append([]string(nil), j.Spec.Command...)
	}
	for k, v := range j.Spec.Labels {
		sub.Labels[k] = v
	}
	if _, ok := sub.Labels[retryOfLabel]; ok || len(sub.Labels) < jobs.MaxLabels {
		sub.Labels[retryOfLabel] = j.ID
	}
	if len(j.Spec.Params) > 0 {
		sub.Params = make(map[string]json.RawMessage, len(j.Spec.Params))
		for k, v := range j.Spec.Params {
			b, err := json.Marshal(v)
			if err != nil {
				return jobs.Submission{}, fmt.Errorf("parameter %s of job %s: %w", k, j.ID, err)
			}
			sub.Params[k] = b
		}
	}
	return sub, nil
}

// freshKey is an idempotency key no earlier submission used: a retry that
// a network error makes the user repeat creates a second job, which is
// what "retry" asks for, where the job's own key would return the old one.
func freshKey(id string) (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "retry-" + id + "-" + hex.EncodeToString(b), nil
}
