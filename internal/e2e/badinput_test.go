package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

func trainCatalog(t *testing.T) *jobs.Catalog {
	t.Helper()
	lo, hi := 1.0, 100.0
	cat, err := jobs.NewCatalog(map[string]jobs.Template{
		"train": {Handler: "count", Class: jobs.ClassCore, Params: map[string]jobs.ParamSpec{
			"epochs": {Type: jobs.ParamInt, Required: true, Min: &lo, Max: &hi},
			"mode":   {Type: jobs.ParamEnum, Values: []string{"fast", "full"}, Default: "fast"},
			"lr":     {Type: jobs.ParamFloat, Default: 0.1},
			"note":   {Type: jobs.ParamString, Default: ""},
		}},
	})
	if err != nil {
		t.Fatalf("NewCatalog: %v", err)
	}
	return cat
}

func TestBadInputIsRejectedAndNothingIsEnqueued(t *testing.T) {
	// No controller: nothing but the intake could write to the namespace.
	p := newPlane(t, trainCatalog(t), nil)
	nc := p.conn(t)

	manyLabels := map[string]string{}
	for i := range jobs.MaxLabels + 1 {
		manyLabels[fmt.Sprintf("k%d", i)] = "v"
	}
	labelsJSON, _ := json.Marshal(manyLabels)
	huge := `{"template":"train","params":{"epochs":5},"labels":{"note":"` + strings.Repeat("x", 70<<10) + `"}}`

	cases := []struct {
		name  string
		body  string
		code  intake.Code
		field string
	}{
		{"bad JSON", `{"template":"train",`, intake.CodeInvalid, "body"},
		{"not an object", `7`, intake.CodeInvalid, "body"},
		// An array is a batch: each element must be a submission, and the
		// whole batch is refused, naming the element.
		{"a batch of non-objects", `[1,2,3]`, intake.CodeInvalid, "[0]"},
		{"a batch with one bad job", `[{"template":"train","params":{"epochs":5}},{"template":"nope"}]`, intake.CodeInvalid, "[1].template"},
		{"two objects", `{"template":"train","params":{"epochs":5}} {}`, intake.CodeInvalid, "body"},
		{"empty body", ``, intake.CodeInvalid, "body"},
		{"invalid UTF-8", "{\"template\":\"tr\xffain\"}", intake.CodeInvalid, "body"},
		{"missing template", `{"params":{"epochs":5}}`, intake.CodeInvalid, "template"},
		{"unknown template", `{"template":"nope","params":{"epochs":5}}`, intake.CodeInvalid, "template"},
		{"missing required param", `{"template":"train","params":{}}`, intake.CodeInvalid, "params.epochs"},
		{"unknown param", `{"template":"train","params":{"epochs":5,"batch":3}}`, intake.CodeInvalid, "params.batch"},
		{"int above max", `{"template":"train","params":{"epochs":101}}`, intake.CodeInvalid, "params.epochs"},
		{"int below min", `{"template":"train","params":{"epochs":0}}`, intake.CodeInvalid, "params.epochs"},
		{"string for int", `{"template":"train","params":{"epochs":"5"}}`, intake.CodeInvalid, "params.epochs"},
		{"float for int", `{"template":"train","params":{"epochs":2.5}}`, intake.CodeInvalid, "params.epochs"},
		{"enum value not allowed", `{"template":"train","params":{"epochs":5,"mode":"turbo"}}`, intake.CodeInvalid, "params.mode"},
		{"string for float", `{"template":"train","params":{"epochs":5,"lr":"fast"}}`, intake.CodeInvalid, "params.lr"},
		{"oversize message", huge, intake.CodeTooLarge, "body"},
		{"raw command disallowed", `{"command":["rm","-rf","/"]}`, intake.CodeInvalid, "command"},
		{"negative timeout", `{"template":"train","params":{"epochs":5},"timeout":"-5m"}`, intake.CodeInvalid, "timeout"},
		{"timeout above max", `{"template":"train","params":{"epochs":5},"timeout":"9999h"}`, intake.CodeInvalid, "timeout"},
		{"unknown class", `{"template":"train","params":{"epochs":5},"class":"gold"}`, intake.CodeInvalid, "class"},
		{"bad team name", `{"template":"train","params":{"epochs":5},"team":"Bad Team!"}`, intake.CodeInvalid, "team"},
		{"unknown top-level field", `{"template":"train","params":{"epochs":5},"priority":9}`, intake.CodeInvalid, "priority"},
		{"wrong type top-level field", `{"template":"train","params":{"epochs":5},"labels":"x"}`, intake.CodeInvalid, "labels"},
		{"too many labels", `{"template":"train","params":{"epochs":5},"labels":` + string(labelsJSON) + `}`, intake.CodeInvalid, "labels"},
		{"bad label key", `{"template":"train","params":{"epochs":5},"labels":{"-x y":"v"}}`, intake.CodeInvalid, "labels.-x y"},
		{"idempotency key with space", `{"template":"train","params":{"epochs":5},"idempotency_key":"a b"}`, intake.CodeInvalid, "idempotency_key"},
		// Trojan Source: text that displays in another order than it runs.
		{"right-to-left override in a parameter", `{"template":"train","params":{"epochs":5,"note":"ok\u202e"}}`, intake.CodeInvalid, "params.note"},
		{"raw override in a parameter", "{\"template\":\"train\",\"params\":{\"epochs\":5,\"note\":\"a\u202eb\"}}", intake.CodeInvalid, "params.note"},
		{"isolate in a label", `{"template":"train","params":{"epochs":5},"labels":{"note":"\u2067x"}}`, intake.CodeInvalid, "labels.note"},
		{"override in an idempotency key", `{"template":"train","params":{"epochs":5},"idempotency_key":"k\u202d"}`, intake.CodeInvalid, "idempotency_key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := nc.Request(p.subj.Submit(), []byte(tc.body), 10*time.Second)
			if err != nil {
				t.Fatalf("request: %v", err)
			}
			var eb intake.ErrorBody
			if err := json.Unmarshal(m.Data, &eb); err != nil {
				t.Fatalf("reply %q does not decode as an ErrorBody: %v", m.Data, err)
			}
			if eb.Error.Code != tc.code {
				t.Fatalf("code %q, want %q (reply %s)", eb.Error.Code, tc.code, m.Data)
			}
			var fields []string
			found := false
			for _, pr := range eb.Error.Problems {
				fields = append(fields, pr.Field)
				if pr.Field == tc.field {
					found = true
					if pr.Message == "" {
						t.Errorf("problem for %s has no message", pr.Field)
					}
				}
			}
			if !found {
				t.Errorf("problems name fields %q, want one naming %q (reply %s)", fields, tc.field, m.Data)
			}
			if eb.Error.Message == "" {
				t.Errorf("reply has no message: %s", m.Data)
			}
		})
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := p.store.List(ctx, queues.ListOptions{Limit: 1000})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(list) != 0 {
		t.Fatalf("%d jobs recorded after only bad submissions, want 0 (first: %+v)", len(list), list[0])
	}
	stats, err := p.store.QueueStats(ctx)
	if err != nil {
		t.Fatalf("QueueStats: %v", err)
	}
	for _, s := range stats {
		if s.Pending+s.Scheduled+s.Active+s.Retry != 0 {
			t.Errorf("queue %s not empty after only bad submissions: %+v", s.Queue, s)
		}
	}

	// The intake still serves: a valid submission is accepted and recorded.
	m, err := nc.Request(p.subj.Submit(), []byte(`{"template":"train","params":{"epochs":5,"mode":"full"}}`), 10*time.Second)
	if err != nil {
		t.Fatalf("valid request: %v", err)
	}
	var r intake.Receipt
	if err := json.Unmarshal(m.Data, &r); err != nil || r.JobID == "" {
		t.Fatalf("valid submission: reply %s (%v)", m.Data, err)
	}
	j := p.getJob(t, r.JobID)
	if j.State != jobs.StateQueued || j.Spec.Params["mode"] != "full" {
		t.Errorf("valid job recorded as state %s params %v", j.State, j.Spec.Params)
	}
	stats, err = p.store.QueueStats(ctx)
	if err != nil {
		t.Fatalf("QueueStats: %v", err)
	}
	pending := 0
	for _, s := range stats {
		pending += s.Pending
	}
	if pending != 1 {
		t.Errorf("%d pending tasks after one valid submission, want 1", pending)
	}
}
