// Package browser starts a headless Chromium for `ballast-tools screenshot` and
// the tests that look at the dashboard, so both run the browser the same
// way: the same binary lookup, the same flags, a fresh profile each time.
package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// EnvChromium names the environment variable that points at the Chromium
// binary when it is not at DefaultPath.
const EnvChromium = "BALLAST_CHROMIUM"

// DefaultPath is where Debian's chromium package puts its launcher.
const DefaultPath = "/usr/bin/chromium"

// ErrNotFound is returned (wrapped) when no Chromium binary can be found.
var ErrNotFound = errors.New("chromium not found")

// Find returns the Chromium binary to run: path if given, else
// $BALLAST_CHROMIUM, else /usr/bin/chromium, else chromium on PATH. The
// result is checked to exist and be executable; an explicit path or
// variable that does not is an error rather than a silent fallback, so a
// typo is not hidden by another browser.
func Find(path string) (string, error) {
	from := "--chromium"
	if path == "" {
		path, from = os.Getenv(EnvChromium), "$"+EnvChromium
	}
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("%w at %s (from %s): %v", ErrNotFound, path, from, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath(DefaultPath); err == nil {
		return p, nil
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%w: not at %s, not on PATH, and $%s is not set", ErrNotFound, DefaultPath, EnvChromium)
}

// Options configure Start.
type Options struct {
	// Path is the Chromium binary; empty means Find("").
	Path string
	// Width and Height are the window size in CSS pixels (default
	// 1400×900).
	Width, Height int
}

// Browser is one running headless Chromium with one tab.
type Browser struct {
	tab     context.Context
	cancel  func()
	profile string
}

// Start runs Chromium headless and opens a tab. The browser lives until
// Close or until ctx ends, so give ctx no short deadline: bound each step
// with the timeouts of the methods instead.
func Start(ctx context.Context, o Options) (*Browser, error) {
	bin, err := Find(o.Path)
	if err != nil {
		return nil, err
	}
	if o.Width <= 0 {
		o.Width = 1400
	}
	if o.Height <= 0 {
		o.Height = 900
	}
	// A profile of our own, removed at Close, so no state (cookies, cache,
	// a stale lock) carries over from an earlier run.
	profile, err := os.MkdirTemp("", "ballast-chromium-")
	if err != nil {
		return nil, err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(o.Width, o.Height),
		chromedp.Headless,
		// Root in a container has no user namespace for the sandbox.
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		// The machine may have no network beyond loopback: keep Chromium
		// from reaching out for updates, sync, QUIC probes and the like,
		// which only slow it down or log errors there.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-domain-reliability", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	tab, cancelTab := chromedp.NewContext(actx)
	b := &Browser{tab: tab, profile: profile, cancel: func() {
		cancelTab()
		cancelAlloc() // waits for the browser process to exit
	}}
	// The first action starts the browser; doing it here makes a browser
	// that cannot start fail Start rather than the first page load.
	if err := chromedp.Do(tab); err != nil {
		_ = b.Close()
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	return b, nil
}

// Close stops the browser and removes its profile. On a tab from NewTab
// it closes that tab only.
func (b *Browser) Close() error {
	b.cancel()
	if b.profile == "" {
		return nil
	}
	return os.RemoveAll(b.profile)
}

// NewTab opens another tab in the same browser: tests that share one
// browser (starting Chromium is the slow part) each get a page of their
// own, with the browser's cookies shared. Close the tab when done; closing
// the browser closes its tabs too.
func (b *Browser) NewTab() (*Browser, error) {
	tab, cancel := chromedp.NewContext(b.tab)
	if err := chromedp.Do(tab); err != nil {
		cancel()
		return nil, fmt.Errorf("opening a tab: %w", err)
	}
	return &Browser{tab: tab, cancel: cancel}, nil
}

// step runs a on the tab with a timeout of its own.
func step[T any](b *Browser, timeout time.Duration, a chromedp.Action[T]) (T, error) {
	ctx, cancel := context.WithTimeout(b.tab, timeout)
	defer cancel()
	return chromedp.Run(ctx, a)
}

// Open navigates the tab to url, waits for the page to load and returns
// the HTTP status of the document (after redirects), so a caller can tell
// a 404 or 401 page from the one it wanted.
func (b *Browser) Open(url string, timeout time.Duration) (int, error) {
	res, err := step(b, timeout, chromedp.NavigateResponse(url))
	if err != nil {
		return 0, fmt.Errorf("opening %s: %w", url, err)
	}
	if res == nil {
		return 0, fmt.Errorf("opening %s: the browser reported no response", url)
	}
	return int(res.Status), nil
}

// Eval evaluates a JavaScript expression in the page and decodes its value
// into T.
func Eval[T any](b *Browser, expr string, timeout time.Duration) (T, error) {
	return step(b, timeout, chromedp.Evaluate[T](expr))
}

// WaitFor waits until the JavaScript expression is truthy in the page.
func (b *Browser) WaitFor(expr string, timeout time.Duration) error {
	_, err := step(b, timeout+time.Second, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(timeout)))
	if err != nil {
		return fmt.Errorf("waiting for %s: %w", expr, err)
	}
	return nil
}

// WaitUpdates waits until the dashboard has drawn at least n overviews
// (its body's data-updates counter).
func (b *Browser) WaitUpdates(n int, timeout time.Duration) error {
	return b.WaitFor(fmt.Sprintf("Number(document.body && document.body.dataset.updates || 0) >= %d", n), timeout)
}

// Screenshot returns a PNG of the whole page, beyond the window's height
// when the page is longer.
func (b *Browser) Screenshot(timeout time.Duration) ([]byte, error) {
	return step(b, timeout, func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
		m, err := cdp.Call(ctx, t, page.GetLayoutMetrics, cdp.Empty{})
		if err != nil {
			return nil, err
		}
		size := m.CSSContentSize
		if size == nil {
			return nil, errors.New("the browser reported no content size")
		}
		res, err := cdp.Call(ctx, t, page.CaptureScreenshot, page.CaptureScreenshotParams{
			Format:                page.CaptureScreenshotFormatPng,
			CaptureBeyondViewport: new(true),
			FromSurface:           new(true),
			Clip:                  &page.Viewport{X: 0, Y: 0, Width: size.Width, Height: size.Height, Scale: 1},
		})
		if err != nil {
			return nil, err
		}
		return res.Data, nil
	})
}

// valuesJS collects every [data-k] element of the page: its data-v when it
// has one (the raw value behind a rounded text), else its text.
const valuesJS = `Object.fromEntries(Array.from(document.querySelectorAll('[data-k]'),
	(e) => [e.dataset.k, e.dataset.v !== undefined ? e.dataset.v : e.textContent]))`

// Values reads the named values of the page, as the dashboard marks them:
// each element with a data-k attribute gives its name, and its data-v
// attribute (or its text without one) the value.
func (b *Browser) Values(timeout time.Duration) (map[string]string, error) {
	return Eval[map[string]string](b, valuesJS, timeout)
}
