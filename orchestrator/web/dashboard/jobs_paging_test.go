package dashboard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/tools/browser"
)

// TestJobsListPagesWithTheAPIsCursor: the list asks for one page, Older
// asks for the page after the API's next cursor, Newer goes back to the
// first, and every filter goes to the API as its query parameter.
func TestJobsListPagesWithTheAPIsCursor(t *testing.T) {
	t.Parallel()
	job := func(id string) map[string]any {
		return map[string]any{"id": id, "state": "succeeded", "attempt": 1, "spec": map[string]any{"template": "etl"}}
	}
	var mu sync.Mutex
	var queries []string
	mux := pageMux()
	mux.HandleFunc("GET /api/v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.URL.RawQuery)
		mu.Unlock()
		page := map[string]any{"jobs": []any{job("j-new-1"), job("j-new-2")}, "next": "123.cursor", "examined": 2}
		if r.URL.Query().Get("after") == "123.cursor" {
			page = map[string]any{"jobs": []any{job("j-old-1")}, "examined": 1}
		}
		_ = json.NewEncoder(w).Encode(page)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	b := startBrowser(t)
	if status, err := b.Open(srv.URL+"/dashboard#view=jobs", 10*time.Second); err != nil || status != http.StatusOK {
		t.Fatalf("opening the page: %d %v", status, err)
	}
	row := func(id string) string { return fmt.Sprintf(`document.querySelector('#jobs tr[data-job=%q]')`, id) }
	click := func(id string) {
		t.Helper()
		if _, err := browser.Eval[bool](b, fmt.Sprintf(`(() => { document.getElementById(%q).click(); return true; })()`, id), 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.WaitFor(row("j-new-1")+` && document.getElementById('jobs-newer').disabled && !document.getElementById('jobs-older').disabled`, 10*time.Second); err != nil {
		t.Fatalf("the first page: %v", err)
	}
	click("jobs-older")
	if err := b.WaitFor(row("j-old-1")+` && !`+row("j-new-1")+` && document.getElementById('jobs-older').disabled && !document.getElementById('jobs-newer').disabled`, 10*time.Second); err != nil {
		t.Fatalf("the second page: %v", err)
	}
	click("jobs-newer")
	if err := b.WaitFor(row("j-new-1"), 10*time.Second); err != nil {
		t.Fatalf("back to the first page: %v", err)
	}
	// Every filter reaches the API by its name.
	if _, err := browser.Eval[bool](b, `(() => {
		const set = (id, v) => { const e = document.getElementById(id); e.value = v; e.dispatchEvent(new Event(e.tagName === 'SELECT' ? 'change' : 'input')); };
		set('f-template', 'etl'); set('f-team', 'ml'); set('f-class', 'burst'); set('f-pool', 'spot'); set('f-label', 'env=prod'); set('f-since', '24h'); set('f-id', '01a2');
		return true; })()`, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	want := []string{"template=etl", "team=ml", "class=burst", "pool=spot", "label=env%3Dprod", "since=24h", "id=01a2", "limit=25"}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		last := queries[len(queries)-1]
		all := strings.Join(queries, " ")
		mu.Unlock()
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(last, w)
		}
		if ok {
			if !strings.Contains(all, "after=123.cursor") {
				t.Errorf("Older did not send the cursor: %s", all)
			}
			if strings.Contains(last, "after=") {
				t.Errorf("new filters kept the old page's cursor: %s", last)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the filters did not all reach the API; last query %q", last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
