package intake

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
)

// SubmitPath is the HTTP route of submissions.
const SubmitPath = "/api/v1/jobs"

// HTTPHandler serves POST /api/v1/jobs: 201 with a Receipt for a new job,
// 200 when the idempotency key found an existing one, and an ErrorBody with
// the code's status otherwise. With a non-empty token, requests must carry
// "Authorization: Bearer TOKEN"; an empty token turns authentication off
// (for ballast dev on localhost). Submit calls are bounded by
// DefaultTimeout and failures are logged with slog.Default().
func HTTPHandler(sub Submitter, token string) http.Handler {
	return newHTTPHandler(SubmitPath, newJobsEndpoint(sub, DefaultTimeout, slog.Default()), token)
}

// newHTTPHandler serves POST path with ep, behind the bearer token.
func newHTTPHandler(path string, ep endpoint, token string) http.Handler {
	h := &httpHandler{
		ep:    ep,
		auth:  token != "",
		token: sha256.Sum256([]byte(token)),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+path, h.submit)
	return mux
}

type httpHandler struct {
	ep    endpoint
	auth  bool
	token [32]byte // a hash, so the comparison takes the same time whatever the length
}

func (h *httpHandler) submit(w http.ResponseWriter, r *http.Request) {
	if h.auth && !h.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="ballast"`)
		writeError(w, http.StatusUnauthorized, Error{Code: CodeUnauthorized,
			Message: "missing or wrong bearer token: send the header Authorization: Bearer TOKEN"})
		return
	}
	// Requiring JSON also keeps plain HTML forms on other sites from
	// submitting to a server running without a token.
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, Error{Code: CodeInvalid,
			Message: "send the submission as JSON with the header Content-Type: application/json"})
		return
	}
	limit := h.ep.limit()
	if r.ContentLength > int64(limit) {
		status, body := h.ep.refuseTooLarge(int(r.ContentLength))
		write(w, status, body)
		return
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(limit)))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		status, body := h.ep.refuseTooLarge(-1)
		write(w, status, body)
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, Error{Code: CodeInvalid, Message: "could not read the request body: " + err.Error()})
		return
	}
	status, body := h.ep.handle(r.Context(), data, "remote", r.RemoteAddr)
	write(w, status, body)
}

func (h *httpHandler) authorized(r *http.Request) bool {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(got[:], h.token[:]) == 1
}

func writeError(w http.ResponseWriter, status int, e Error) {
	write(w, status, encode(ErrorBody{Error: e}))
}

func write(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
