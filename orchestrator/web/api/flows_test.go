package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/pipeline"
	"github.com/ballastdev/ballast/orchestrator/web/api"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/flows"
)

func TestFlowEndpoints(t *testing.T) {
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	cat, err := jobs.NewCatalog(map[string]jobs.Template{
		"trial": {Command: []string{"true"}, Class: jobs.ClassBurst, Params: map[string]jobs.ParamSpec{"lr": {Type: jobs.ParamFloat, Required: true}}},
		"etl":   {Command: []string{"true"}, Class: jobs.ClassCore},
	})
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sub := &controller.Submitter{Catalog: cat, Store: store}
	sw, _ := controller.NewSweeps(controller.SweepsOptions{Sweeps: flows.New(store), Jobs: store, Submitter: sub, Catalog: cat, Logger: quiet})
	pl, err := controller.NewPipelines(controller.PipelinesOptions{Runs: flows.New(store), Jobs: store, Submitter: sub, Catalog: cat, Logger: quiet,
		Pipelines: map[string]pipeline.Pipeline{"daily": {Schedule: "@daily", Steps: map[string]pipeline.Step{"a": {Template: "etl"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.Handler(store, sub, "s3cret", api.Flows{Sweeps: sw, Pipelines: pl}, api.Insight{}))
	t.Cleanup(srv.Close)
	call := func(method, path, body string, token string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(res.Body).Decode(&out)
		return res.StatusCode, out
	}

	code, out := call("POST", "/api/v1/sweeps", `{"template":"trial","space":{"list":[{"lr":0.1},{"lr":0.2}]}}`, "s3cret")
	if code != http.StatusCreated || out["trials"] != float64(2) {
		t.Fatalf("submit sweep: %d %v", code, out)
	}
	id := out["sweep_id"].(string)
	if code, _ := call("GET", "/api/v1/sweeps/"+id, "", ""); code != http.StatusUnauthorized {
		t.Fatalf("read without a token: %d", code)
	}
	code, out = call("GET", "/api/v1/sweeps/"+id, "", "s3cret")
	if code != http.StatusOK || out["summary"].(map[string]any)["total"] != float64(2) {
		t.Fatalf("sweep view: %d %v", code, out)
	}
	if code, out = call("POST", "/api/v1/sweeps/"+id+"/cancel", "", "s3cret"); code != http.StatusOK || out["cancelled"] != true {
		t.Fatalf("cancel sweep: %d %v", code, out)
	}
	if code, out = call("GET", "/api/v1/sweeps", "", "s3cret"); code != http.StatusOK || len(out["sweeps"].([]any)) != 1 {
		t.Fatalf("sweep list: %d %v", code, out)
	}
	if code, _ = call("GET", "/api/v1/sweeps/nope", "", "s3cret"); code != http.StatusNotFound {
		t.Fatalf("unknown sweep: %d", code)
	}

	code, out = call("POST", "/api/v1/pipelines/daily/trigger", "", "s3cret")
	if code != http.StatusCreated || out["trigger"] != string(flows.TriggerManual) {
		t.Fatalf("trigger: %d %v", code, out)
	}
	runID := out["id"].(string)
	if code, out = call("POST", "/api/v1/pipelines/nope/trigger", "", "s3cret"); code != http.StatusNotFound {
		t.Fatalf("unknown pipeline: %d %v", code, out)
	}
	// forbid (the default) refuses a second run while the first is active.
	if code, out = call("POST", "/api/v1/pipelines/daily/trigger", "", "s3cret"); code != http.StatusBadRequest {
		t.Fatalf("second trigger under forbid: %d %v", code, out)
	}
	code, out = call("GET", "/api/v1/pipelines/daily/runs", "", "s3cret")
	if code != http.StatusOK || len(out["runs"].([]any)) != 1 {
		t.Fatalf("runs: %d %v", code, out)
	}
	code, out = call("POST", "/api/v1/runs/"+runID+"/cancel", "", "s3cret")
	if code != http.StatusOK || out["state"] != string(pipeline.RunCancelled) {
		t.Fatalf("cancel run: %d %v", code, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	run, err := flows.New(store).GetRun(ctx, runID)
	if err != nil || run.State != pipeline.RunCancelled {
		t.Fatalf("run after cancel: %+v %v", run, err)
	}
}
