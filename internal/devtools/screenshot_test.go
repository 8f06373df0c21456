package devtools

import (
	"strings"
	"testing"
)

func TestDashboardURLCarriesTokenAndSpan(t *testing.T) {
	got, err := dashboardURL("http://127.0.0.1:8480/", "s3 cret", "1h")
	if err != nil || got != "http://127.0.0.1:8480/dashboard?token=s3+cret#span=1h" {
		t.Fatalf("got %q %v", got, err)
	}
	if got, _ := dashboardURL("https://ballast.example:443", "", ""); got != "https://ballast.example:443/dashboard" {
		t.Fatalf("no token, no span: %q", got)
	}
	for _, c := range []struct{ base, span, want string }{
		{"http://127.0.0.1:8480", "2d", `--span "2d": use 1h, 6h or 24h`},
		{"127.0.0.1:8480", "", "give a URL such as"},
	} {
		if _, err := dashboardURL(c.base, "", c.span); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q %q: %v, want %q", c.base, c.span, err, c.want)
		}
	}
}
