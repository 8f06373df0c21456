package dashboard

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/tools/browser"
)

// TestPageListsJobsAndOpensOne runs the jobs console against a stand-in
// API: the list, its state filter as the query the API takes, a job's page
// from the list's link with its record and output, shown as text however
// hostile the output, and the job kept in the address beside the span.
func TestPageListsJobsAndOpensOne(t *testing.T) {
	t.Parallel()
	const hostile = `<img src=x onerror="document.body.dataset.pwned=1">`
	failed := map[string]any{"id": "j-failed", "state": "failed", "attempt": 2, "runs": 1, "queue": "burst", "worker": "spot-1",
		"exit_code": 3, "last_error": "exited with code 3", "created_at": time.Now().Format(time.RFC3339),
		"spec": map[string]any{"template": "train", "team": "ml", "class": "burst", "params": map[string]any{"lr": 0.1}}}
	done := map[string]any{"id": "j-done", "state": "succeeded", "attempt": 1, "queue": "core",
		"spec": map[string]any{"template": "etl", "team": "data", "class": "core"}}
	var mu sync.Mutex
	var queries []string
	mux := pageMux()
	mux.HandleFunc("GET /api/v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.URL.RawQuery)
		mu.Unlock()
		list := []any{failed, done}
		if st := r.URL.Query().Get("state"); st == "failed" {
			list = []any{failed}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"jobs": list})
	})
	mux.HandleFunc("GET /api/v1/jobs/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != "j-failed" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(failed)
	})
	mux.HandleFunc("GET /api/v1/jobs/{id}/logs", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"lines": []map[string]any{
			{"id": "1-0", "attempt": 2, "stream": "stdout", "text": "epoch 1"},
			{"id": "1-1", "attempt": 2, "stream": "stderr", "text": hostile},
		}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	b := startBrowser(t)
	if status, err := b.Open(srv.URL+"/dashboard#view=jobs&span=1h", 10*time.Second); err != nil || status != http.StatusOK {
		t.Fatalf("opening the page: %d %v", status, err)
	}
	if err := b.WaitFor(`document.getElementById('jobs').dataset.count === '2'`, 10*time.Second); err != nil {
		t.Fatalf("the list did not show two jobs: %v", err)
	}
	vals, err := b.Values(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Runs and deliveries side by side: lent before it ran, it has two
	// deliveries and one run.
	for k, want := range map[string]string{"jobs.j-failed.state": "failed", "jobs.j-failed.template": "train", "jobs.j-done.team": "data",
		"jobs.j-failed.runs": "1", "jobs.j-failed.attempt": "2"} {
		if vals[k] != want {
			t.Errorf("%s = %q, want %q", k, vals[k], want)
		}
	}

	// The filter asks the API for the state, and the list follows.
	if _, err := browser.Eval[string](b, `(() => { const s = document.getElementById('f-state'); s.value = 'failed'; s.dispatchEvent(new Event('change')); return ''; })()`, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(`document.getElementById('jobs').dataset.count === '1'`, 10*time.Second); err != nil {
		t.Fatalf("the filter did not narrow the list: %v", err)
	}
	mu.Lock()
	asked := strings.Join(queries, " ")
	mu.Unlock()
	if !strings.Contains(asked, "state=failed") || !strings.Contains(asked, "limit=") {
		t.Errorf("the filter was not sent to the API: %s", asked)
	}

	// The list's link opens the job's page and keeps the span in the address.
	if _, err := browser.Eval[string](b, `(() => { document.querySelector('a[data-k="jobs.j-failed.id"]').click(); return ''; })()`, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitFor(`document.getElementById('job-logs').dataset.lines === '2'`, 10*time.Second); err != nil {
		t.Fatalf("the job's page did not open: %v", err)
	}
	// The record and its log are fetched apart: the log may be drawn
	// first (it once was, in CI), so the record's fields are waited for too.
	if err := b.WaitFor(`(document.body.dataset.ready || '').split(' ').includes('job')`, 10*time.Second); err != nil {
		t.Fatalf("the job's fields were not drawn: %v", err)
	}
	vals, err = b.Values(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"job.exit_code": "3", "job.last_error": "exited with code 3", "job.params": "lr=0.1", "job.team": "ml",
		"job.runs": "1", "job.deliveries": "2"} {
		if vals[k] != want {
			t.Errorf("%s = %q, want %q", k, vals[k], want)
		}
	}
	got, err := browser.Eval[string](b, `[location.hash, document.getElementById('job-logs').textContent, String(document.body.dataset.pwned || ''),
		String(document.querySelectorAll('#job-logs img').length)].join('|')`, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(got, "|")
	if len(parts) != 4 || !strings.Contains(parts[0], "span=1h") || !strings.Contains(parts[0], "job=j-failed") {
		t.Errorf("address %q: want the span and the job", parts[0])
	}
	if len(parts) == 4 && (!strings.Contains(parts[1], "[2 stderr] "+hostile) || parts[2] != "" || parts[3] != "0") {
		t.Errorf("output not shown as text: %q", got)
	}
}

// pageMux serves the page and a fixed overview, for the tests of a view
// that add the API route they look at.
func pageMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/dashboard", Handler())
	mux.Handle("/dashboard/", Handler())
	mux.HandleFunc("GET /api/v1/overview", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(sample(time.Now(), 1))
	})
	return mux
}
