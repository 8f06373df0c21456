package api

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/ballastdev/ballast/orchestrator/control/intake"
)

// The console's sessions are stateless: the cookie is a random session ID
// and its MAC, and the session's write token is another MAC of the same
// ID. Nothing is stored, so any controller sharing the API token checks
// any session, and a session ends with its browser.
//
// The cookie alone only reads. A write from the console carries the write
// token in the CSRFHeader header: the page reads it from GET SessionPath,
// which another site's page cannot read (no CORS), and a form or an image
// another site forges cannot set a header. Origin and Sec-Fetch-Site are
// checked too, so a forged write fails twice.
const (
	// SessionPath gives the console its session's write token.
	SessionPath = "/api/v1/session"
	// CSRFHeader carries the write token on the console's writes.
	CSRFHeader = "X-Ballast-CSRF"
)

// macKey signs sessions. With an API token it is derived from it, so every
// controller of an installation agrees; without one (dev mode) it is
// random per process, which only means a restarted controller asks the
// page to fetch its token again.
func macKey(token string) []byte {
	if token != "" {
		m := hmac.New(sha256.New, []byte(token))
		m.Write([]byte("ballast console session key v1"))
		return m.Sum(nil)
	}
	k := make([]byte, 32)
	_, _ = rand.Read(k) // crypto/rand.Read never returns an error
	return k
}

func (h *handler) mac(purpose, session string) string {
	m := hmac.New(sha256.New, h.sessionKey)
	m.Write([]byte(purpose + "\x00" + session))
	return hex.EncodeToString(m.Sum(nil))
}

// newSession is a fresh cookie value: a random ID and its read MAC.
func (h *handler) newSession() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	return id + "." + h.mac("read", id)
}

// session returns the session ID of r's cookie when its MAC is right.
func (h *handler) session(r *http.Request) (string, bool) {
	c, err := r.Cookie(tokenCookie)
	if err != nil {
		return "", false
	}
	id, sum, ok := strings.Cut(c.Value, ".")
	if !ok || len(id) != 32 {
		return "", false
	}
	return id, hmac.Equal([]byte(sum), []byte(h.mac("read", id)))
}

// codeForbidden: the caller is known but may not do this from where it is.
const codeForbidden intake.Code = "forbidden"

// devSession names the one session of a controller without a token: there
// is no login to start one, and every caller may act anyway.
const devSession = "dev"

// writeToken is the write token of the session of r, "" without one.
func (h *handler) writeToken(r *http.Request) string {
	if !h.auth {
		return h.mac("write", devSession)
	}
	id, ok := h.session(r)
	if !ok {
		return ""
	}
	return h.mac("write", id)
}

// crossSite reports whether a browser says r comes from another site's
// page. Clients that are not browsers send neither header.
func crossSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return true
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return true
		}
	}
	return false
}

// loopbackHost reports whether the Host a request was sent to names this
// machine's loopback interface. A controller without a token serves only
// there; a page whose own name was re-pointed at 127.0.0.1 (DNS
// rebinding) is same-origin in its browser but sends its own name here.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// write guards the endpoints that change something. A bearer token acts.
// A browser acts only from this origin, with a valid session cookie (when
// the API has a token) and that session's write token in CSRFHeader,
// compared in constant time. Without a token (dev mode) a request that no
// browser marks still acts, as the CLI does; one a browser marks must
// carry the write token, so a page on another site cannot act on a
// controller listening on localhost.
func (h *handler) write(f http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && h.auth {
			if !h.tokenOK(got) {
				h.refuse(w, http.StatusUnauthorized, "wrong bearer token: send the header Authorization: Bearer TOKEN")
				return
			}
			f(w, r)
			return
		}
		browser := r.Header.Get("Origin") != "" || r.Header.Get("Sec-Fetch-Site") != "" || r.Header.Get(CSRFHeader) != ""
		if _, err := r.Cookie(tokenCookie); err == nil {
			browser = true
		}
		if !h.auth && !browser {
			f(w, r)
			return
		}
		if crossSite(r) || (!h.auth && !loopbackHost(r.Host)) {
			h.refuse(w, http.StatusForbidden, "a write from another site's page is refused: act from the Ballast console itself")
			return
		}
		want := h.writeToken(r)
		if want == "" {
			h.refuse(w, http.StatusUnauthorized, "missing or wrong bearer token: send the header Authorization: Bearer TOKEN, or sign in to the console at /dashboard?token=TOKEN")
			return
		}
		if !hmac.Equal([]byte(r.Header.Get(CSRFHeader)), []byte(want)) {
			h.refuse(w, http.StatusForbidden, "missing or wrong "+CSRFHeader+" header: the console sends its session's write token (GET "+SessionPath+"); reload the page")
			return
		}
		f(w, r)
	}
}

func (h *handler) refuse(w http.ResponseWriter, status int, msg string) {
	code := intake.CodeUnauthorized
	if status == http.StatusForbidden {
		code = codeForbidden
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="ballast"`)
	}
	writeJSON(w, status, intake.ErrorBody{Error: intake.Error{Code: code, Message: msg}})
}

// serveSession gives the console its write token. It is a read, guarded
// like the others; the answer is never cached.
func (h *handler) serveSession(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if !h.auth && !loopbackHost(r.Host) {
		h.refuse(w, http.StatusForbidden, "without an API token the console works only at 127.0.0.1 or localhost: open it there, or set http.api_token")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"csrf_token": h.writeToken(r), "header": CSRFHeader})
}
