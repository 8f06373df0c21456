package api_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/web/api"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/flows"
	"github.com/ballastdev/ballast/queues/usage"
)

// openAPIPath turns a ServeMux pattern's path into the OpenAPI path that
// documents it: "/{$}" is "/", and a subtree "/dashboard/" is
// "/dashboard/{asset}".
func openAPIPath(p string) string {
	if p == "/{$}" {
		return "/"
	}
	if strings.HasSuffix(p, "/") && p != "/" {
		return p + "{asset}"
	}
	return p
}

// TestOpenAPICoversEveryRoute builds the API with every optional part on
// and holds the served document to its routes, both ways: each route is
// documented with its method, and each documented operation is a route.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	cat, err := jobs.NewCatalog(map[string]jobs.Template{"etl": {Command: []string{"true"}}})
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sub := &controller.Submitter{Catalog: cat, Store: store}
	sw, _ := controller.NewSweeps(controller.SweepsOptions{Sweeps: flows.New(store), Jobs: store, Submitter: sub, Catalog: cat, Logger: quiet})
	pl, err := controller.NewPipelines(controller.PipelinesOptions{Runs: flows.New(store), Jobs: store, Submitter: sub, Catalog: cat, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	h := api.Handler(store, sub, "s3cret-token-long-enough", api.Flows{Sweeps: sw, Pipelines: pl, Metrics: http.NotFoundHandler()},
		api.Insight{Live: &insight.Live{Source: insight.Source{Store: store, Accounting: usage.New(store)}}, Dashboard: http.NotFoundHandler()})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	resp, err := http.Get(srv.URL + api.OpenAPIPath) // no token: the document is public
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		OpenAPI string                               `json:"openapi"`
		Paths   map[string]map[string]map[string]any `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || resp.StatusCode != http.StatusOK || doc.OpenAPI == "" {
		t.Fatalf("GET %s: %d %v", api.OpenAPIPath, resp.StatusCode, err)
	}
	var routes []string
	for _, pat := range api.Patterns(h) {
		method, path, ok := strings.Cut(pat, " ")
		if !ok {
			t.Fatalf("route %q has no method: every route names one", pat)
		}
		op := strings.ToLower(method) + " " + openAPIPath(path)
		routes = append(routes, op)
		if doc.Paths[openAPIPath(path)][strings.ToLower(method)] == nil {
			t.Errorf("route %s is not in openapi.json", pat)
		}
	}
	for path, ops := range doc.Paths {
		for method, o := range ops {
			if !slices.Contains(routes, method+" "+path) {
				t.Errorf("openapi.json documents %s %s, which no route serves", strings.ToUpper(method), path)
			}
			if o["summary"] == nil || o["responses"] == nil {
				t.Errorf("%s %s: no summary or responses", method, path)
			}
		}
	}
	if len(routes) < 20 {
		t.Errorf("only %d routes seen: is every optional part on?", len(routes))
	}
}
