package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

// PagePath is where the page is served; AssetPrefix is where its script
// and style are. The page names its assets by absolute path, so it works
// at both /dashboard and /dashboard/.
const (
	PagePath    = "/dashboard"
	AssetPrefix = "/dashboard/assets/"
)

//go:embed static
var static embed.FS

// contentTypes are set by hand rather than through mime.TypeByExtension,
// whose answer depends on the host's mime tables (some map .js to
// application/x-javascript).
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
}

// file is one embedded file, read once with its validator.
type file struct {
	body  []byte
	ctype string
	etag  string
}

// files maps a name under static/ to its file.
var files = func() map[string]file {
	m := map[string]file{}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		ctype, ok := contentTypes[path.Ext(p)]
		if !ok {
			return nil // only what the page loads is served
		}
		sum := sha256.Sum256(body)
		m[strings.TrimPrefix(p, "static/")] = file{body: body, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		panic("dashboard: reading the embedded files: " + err.Error()) // only a broken build gets here
	}
	return m
}()

// Handler serves GET /dashboard and /dashboard/ (the page) and
// GET /dashboard/assets/NAME (its script and style). Anything else under
// /dashboard/ is 404. It does no authentication: the caller mounts it
// behind its own.
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PagePath, servePage)
	mux.HandleFunc("GET "+PagePath+"/{$}", servePage)
	mux.HandleFunc("GET "+AssetPrefix+"{name}", serveAsset)
	return mux
}

func servePage(w http.ResponseWriter, r *http.Request) {
	f := files["index.html"]
	h := w.Header()
	// The page holds no data; the API calls it makes carry the data and
	// their own auth. These headers keep it from being framed, from
	// loading anything but the controller's own URLs, and from leaking a
	// ?token= URL through the Referer header.
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	serve(w, r, f)
}

func serveAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	f, ok := files[name]
	if !ok || name == "index.html" {
		http.NotFound(w, r)
		return
	}
	serve(w, r, f)
}

// serve writes f with revalidation: the assets change only with the
// binary, so an ETag lets a browser keep them across reloads while a new
// controller version is picked up at once.
func serve(w http.ResponseWriter, r *http.Request, f file) {
	h := w.Header()
	h.Set("Content-Type", f.ctype)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", f.etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
}
