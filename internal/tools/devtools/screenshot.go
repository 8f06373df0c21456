package devtools

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ballastdev/ballast/internal/cli"
	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/tools/browser"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
)

// runScreenshot opens the controller's dashboard in headless Chromium,
// waits for its first overview and writes a PNG of the whole page.
func runScreenshot(ctx context.Context, inv *cli.Invocation, args []string) error {
	fs := inv.Flags("screenshot", "screenshot [--api URL] [--token TOKEN] [--page PAGE] [-o FILE] [--width N --height N] [--chromium PATH]")
	cfgPath := cli.ConfigFlag(fs)
	apiURL := fs.String("api", "", "the controller's HTTP API (default: http:// and the config's http.listen)")
	token := fs.String("token", os.Getenv("BALLAST_API_TOKEN"), "API token (default $BALLAST_API_TOKEN, else the config's)")
	out := fs.String("o", "dashboard.png", "PNG file to write")
	width := fs.Int("width", 1400, "window width in CSS pixels")
	height := fs.Int("height", 900, "window height; the screenshot covers the whole page, however long")
	chromium := fs.String("chromium", "", "Chromium binary (default $"+browser.EnvChromium+", else "+browser.DefaultPath+", else chromium on PATH)")
	timeout := fs.Duration("timeout", 30*time.Second, "how long to wait for the page to show data")
	span := fs.String("span", "", "series span of the charts: 1h, 6h or 24h (default the page's)")
	pagePath := fs.String("page", "", "the console page to capture, as its address names it: view=jobs, view=pipelines, view=sweeps, job=ID, run=ID or sweep=ID (default the overview)")
	if err := inv.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return cli.UsageError("screenshot takes no arguments; the file is -o FILE")
	}
	if *width <= 0 || *height <= 0 {
		return cli.UsageError("--width and --height must be positive")
	}
	if *apiURL == "" || *token == "" {
		cfg, err := cli.LoadConfig(*cfgPath)
		if err != nil {
			return err
		}
		if *apiURL == "" {
			*apiURL = apiBase(cfg.HTTP.Listen)
		}
		if *token == "" {
			if *token, err = cfg.HTTP.Token(); err != nil {
				return err
			}
		}
	}
	page, err := dashboardURL(*apiURL, *token, *span, *pagePath)
	if err != nil {
		return cli.UsageError("%s", err.Error())
	}

	b, err := browser.Start(ctx, browser.Options{Path: *chromium, Width: *width, Height: *height})
	if errors.Is(err, browser.ErrNotFound) {
		return fmt.Errorf("%w: install Debian's chromium package (apt-get install chromium) or pass --chromium PATH", err)
	}
	if err != nil {
		return err
	}
	defer b.Close()
	status, err := b.Open(page, *timeout)
	if err != nil {
		return fmt.Errorf("%w (is the controller running at %s?)", err, *apiURL)
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Errorf("the controller refused the dashboard (%d): pass the API token with --token or $BALLAST_API_TOKEN", status)
	case status != http.StatusOK:
		return fmt.Errorf("GET %s/dashboard answered %d: is this a Ballast controller with the dashboard?", *apiURL, status)
	}
	if err := b.WaitUpdates(1, *timeout); err != nil {
		// The page shows why it has no data (no token, the API down);
		// repeat it rather than only "timed out".
		why, _ := browser.Eval[string](b, `(document.getElementById('alerts') || {}).textContent || ''`, 2*time.Second)
		if why = strings.TrimSpace(why); why != "" {
			return fmt.Errorf("the dashboard showed no overview within %s: %s", *timeout, why)
		}
		return fmt.Errorf("the dashboard showed no overview within %s: %w", *timeout, err)
	}
	// The page asked for marks itself drawn (body[data-ready] lists the
	// pages drawn so far); a page that never draws is an error, not a
	// screenshot of an empty frame.
	if err := b.WaitFor(`(' ' + (document.body.dataset.ready || '') + ' ').includes(' ' + document.body.dataset.view + ' ')`, *timeout); err != nil {
		why, _ := browser.Eval[string](b, `Array.from(document.querySelectorAll('main [data-view]:not([hidden]) .status:not([hidden])'), (e) => e.textContent).join('; ')`, 2*time.Second)
		return fmt.Errorf("the console page %q did not draw within %s: %s", *pagePath, *timeout, strings.TrimSpace(why))
	}
	png, err := b.Screenshot(*timeout)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, png, 0o644); err != nil {
		return err
	}
	_, err = fmt.Fprintln(inv.Stdout(), *out)
	return err
}

// apiBase turns a listen address into a URL to reach it from this host: a
// wildcard or missing host (":8480", "0.0.0.0:8480") is reached on the
// loopback interface.
func apiBase(listen string) string {
	if listen == "" {
		listen = config.DefaultListen
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "http://" + listen
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// dashboardURL is the page to open: /dashboard under base, with the token
// in the query so the controller can set its cookie for the API calls the
// page makes.
func dashboardURL(base, token, span, pagePath string) (string, error) {
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--api %q: give a URL such as http://127.0.0.1:8480", base)
	}
	u.Path += "/dashboard"
	if token != "" {
		u.RawQuery = url.Values{"token": {token}}.Encode()
	}
	frag := url.Values{}
	if span != "" {
		if _, ok := insight.SpanNamed(span); !ok {
			return "", fmt.Errorf("--span %q: use 1h, 6h or 24h", span)
		}
		frag.Set("span", span)
	}
	if pagePath != "" {
		key, val, ok := strings.Cut(strings.TrimPrefix(pagePath, "#"), "=")
		pages := map[string]bool{"view": true, "job": true, "run": true, "sweep": true}
		if !ok || !pages[key] || val == "" || (key == "view" && !slices.Contains([]string{"overview", "jobs", "pipelines", "sweeps"}, val)) {
			return "", fmt.Errorf("--page %q: give view=overview, view=jobs, view=pipelines, view=sweeps, job=ID, run=ID or sweep=ID", pagePath)
		}
		frag.Set(key, val)
	}
	// The page reads its span and page from the fragment, which the login
	// redirect keeps.
	u.Fragment = frag.Encode()
	return u.String(), nil
}
