package devtools

import (
	"strings"
	"testing"
)

func TestDashboardURLCarriesTokenAndSpan(t *testing.T) {
	got, err := dashboardURL("http://127.0.0.1:8480/", "s3 cret", "1h", "")
	if err != nil || got != "http://127.0.0.1:8480/dashboard?token=s3+cret#span=1h" {
		t.Fatalf("got %q %v", got, err)
	}
	if got, _ := dashboardURL("https://ballast.example:443", "", "", ""); got != "https://ballast.example:443/dashboard" {
		t.Fatalf("no token, no span: %q", got)
	}
	for _, c := range []struct{ base, span, want string }{
		{"http://127.0.0.1:8480", "2d", `--span "2d": use 1h, 6h or 24h`},
		{"127.0.0.1:8480", "", "give a URL such as"},
	} {
		if _, err := dashboardURL(c.base, "", c.span, ""); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %q: %v, want %q", c.base, c.span, err, c.want)
		}
	}
	// --page opens any console page: its key and value go in the fragment
	// beside the span.
	got, err = dashboardURL("http://127.0.0.1:8480", "t", "6h", "job=019a8b7c6d5e4f3a2b1c0d9e8f7a")
	if err != nil || got != "http://127.0.0.1:8480/dashboard?token=t#job=019a8b7c6d5e4f3a2b1c0d9e8f7a&span=6h" {
		t.Errorf("--page job=: %q %v", got, err)
	}
	if got, err := dashboardURL("http://127.0.0.1:8480", "", "", "view=sweeps"); err != nil || !strings.HasSuffix(got, "#view=sweeps") {
		t.Errorf("--page view=sweeps: %q %v", got, err)
	}
	for _, p := range []string{"view=nowhere", "jobs", "job=", "task=1"} {
		if _, err := dashboardURL("http://127.0.0.1:8480", "", "", p); err == nil || !strings.Contains(err.Error(), "--page") {
			t.Errorf("--page %q: %v, want an error naming --page", p, err)
		}
	}
}
