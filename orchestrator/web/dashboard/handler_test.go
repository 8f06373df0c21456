package dashboard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, path string, header map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHandlerServesThePageAndItsAssets(t *testing.T) {
	h := Handler()
	cases := []struct {
		path, ctype, contains string
	}{
		{"/dashboard", "text/html; charset=utf-8", `src="/dashboard/assets/app.js"`},
		{"/dashboard/", "text/html; charset=utf-8", `href="/dashboard/assets/app.css"`},
		{"/dashboard/assets/app.js", "text/javascript; charset=utf-8", "/api/v1/overview/stream"},
		{"/dashboard/assets/app.css", "text/css; charset=utf-8", ".pill"},
	}
	for _, c := range cases {
		res := get(t, h, http.MethodGet, c.path, nil)
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d, want 200", c.path, res.StatusCode)
			continue
		}
		if got := res.Header.Get("Content-Type"); got != c.ctype {
			t.Errorf("GET %s: Content-Type %q, want %q", c.path, got, c.ctype)
		}
		if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s: X-Content-Type-Options %q, want nosniff", c.path, got)
		}
		if b := body(t, res); !strings.Contains(b, c.contains) {
			t.Errorf("GET %s: body lacks %q", c.path, c.contains)
		}
	}
}

// The page must load nothing from elsewhere: no CDN, no web font, and a
// policy that would block one if it crept in.
func TestPageLoadsNothingFromElsewhere(t *testing.T) {
	h := Handler()
	res := get(t, h, http.MethodGet, "/dashboard", nil)
	csp := res.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("Content-Security-Policy %q does not limit the page to its own origin", csp)
	}
	for name, f := range files {
		s := strings.ReplaceAll(string(f.body), "http://www.w3.org/2000/svg", "") // the SVG namespace is a name, not a fetch
		for _, bad := range []string{"http://", "https://", "//fonts.", "@import"} {
			if strings.Contains(s, bad) {
				t.Errorf("%s contains %q", name, bad)
			}
		}
	}
}

func TestHandlerRefusesUnknownPaths(t *testing.T) {
	h := Handler()
	for _, p := range []string{
		"/dashboard/assets/nope.js",
		"/dashboard/assets/index.html", // the page is served at /dashboard only
		"/dashboard/assets/",
		"/dashboard/other",
		"/dashboard/assets/app.js/x",
	} {
		if res := get(t, h, http.MethodGet, p, nil); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, res.StatusCode)
		}
	}
	if res := get(t, h, http.MethodPost, "/dashboard", nil); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /dashboard: %d, want 405", res.StatusCode)
	}
}

func TestAssetsRevalidateByETag(t *testing.T) {
	h := Handler()
	res := get(t, h, http.MethodGet, "/dashboard/assets/app.js", nil)
	etag := res.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag on app.js")
	}
	res = get(t, h, http.MethodGet, "/dashboard/assets/app.js", map[string]string{"If-None-Match": etag})
	if res.StatusCode != http.StatusNotModified {
		t.Errorf("GET with If-None-Match %s: %d, want 304", etag, res.StatusCode)
	}
	head := get(t, h, http.MethodHead, "/dashboard", nil)
	if head.StatusCode != http.StatusOK || body(t, head) != "" {
		t.Errorf("HEAD /dashboard: %d with a body", head.StatusCode)
	}
}
