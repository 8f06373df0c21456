package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func TestJobsFilters(t *testing.T) {
	f := newFlowEnv(t, unreachableNATS)
	ctx := context.Background()
	_, sub := f.submitter(t)
	for _, s := range []jobs.Submission{
		{Template: "upload", Team: "vision", Labels: map[string]string{"env": "prod"}},
		{Template: "upload", Team: "speech"},
		{Template: "trial", Team: "vision", Params: raw(map[string]any{"lr": 0.1}), Labels: map[string]string{"env": "dev"}},
	} {
		if _, err := sub.Submit(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	count := func(args ...string) int {
		t.Helper()
		var list []jobs.Job
		out := runOK(t, append([]string{"jobs", "--config", f.path, "-o", "json"}, args...)...)
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return len(list)
	}
	for _, c := range []struct {
		args []string
		want int
	}{
		{nil, 3},
		{[]string{"--template", "upload"}, 2},
		{[]string{"--team", "vision"}, 2},
		{[]string{"--team", "vision", "--template", "trial"}, 1},
		{[]string{"--label", "env=prod"}, 1},
		{[]string{"--label", "env=prod", "--label", "other=x"}, 0},
		{[]string{"--state", "queued", "--since", "1h"}, 3},
		{[]string{"--state", "succeeded"}, 0},
		{[]string{"--since", time.Now().Add(time.Hour).Format(time.RFC3339)}, 0},
	} {
		if got := count(c.args...); got != c.want {
			t.Errorf("jobs %v: %d jobs, want %d", c.args, got, c.want)
		}
	}
	for _, bad := range [][]string{{"--since", "yesterday"}, {"--label", "novalue"}, {"--watch", "--every", "0s"}} {
		if code, _, _ := run(t, append([]string{"jobs", "--config", f.path}, bad...)...); code != 2 {
			t.Errorf("jobs %v: exit %d, want 2", bad, code)
		}
	}
}

func TestJobsWatchRedrawsUntilInterrupted(t *testing.T) {
	f := newFlowEnv(t, unreachableNATS)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	if code := Run(ctx, []string{"jobs", "--config", f.path, "--watch", "--every", "50ms"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if n := strings.Count(out.String(), "--- "); n < 2 {
		t.Errorf("%d redraws in 1s at 50ms:\n%s", n, out.String())
	}
}
