package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/cost"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
)

// Insight is what the overview, cost and advice endpoints and the dashboard
// read; a nil Live leaves them out.
type Insight struct {
	Live *insight.Live
	// Dashboard, when set, serves the web dashboard at /dashboard and its
	// assets under /dashboard/assets/.
	Dashboard http.Handler
	// StreamEvery is the period of the overview stream; 0 means one second.
	StreamEvery time.Duration
}

// MaxWindow bounds the cost and advice windows one request may ask for: a
// window is read from Redis in one go.
const MaxWindow = 31 * 24 * time.Hour

// tokenCookie carries the console's session (session.go) for its own
// requests, so the API token appears in the address bar only once and
// never in a cookie.
const tokenCookie = "ballast_token"

func (h *handler) mountInsight(mux *router, in Insight) {
	if in.Live == nil {
		return
	}
	every := in.StreamEvery
	if every <= 0 {
		every = time.Second
	}
	mux.HandleFunc("GET /api/v1/overview", h.guard(func(w http.ResponseWriter, r *http.Request) {
		span, ok := spanOf(w, r)
		if !ok {
			return
		}
		o, err := in.Live.OverviewSpan(r.Context(), span)
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, o)
	}))
	mux.HandleFunc("GET /api/v1/overview/stream", h.guard(func(w http.ResponseWriter, r *http.Request) {
		span, ok := spanOf(w, r)
		if !ok {
			return
		}
		h.stream(w, r, in.Live, span, every)
	}))
	mux.HandleFunc("GET /api/v1/costs", h.guard(func(w http.ResponseWriter, r *http.Request) {
		from, until, ok := window(w, r)
		if !ok {
			return
		}
		if oldest := time.Now().Add(-in.Live.Source.KeptFor()); from.Before(oldest) {
			// Usage before it was trimmed: the quota would be priced and
			// every attempt missing, a report that looks right and is not.
			writeJSON(w, http.StatusBadRequest, intake.ErrorBody{Error: intake.Error{Code: intake.CodeInvalid,
				Message: fmt.Sprintf("from %s is before the oldest usage records kept (controller.cost_retention is %s): ask from %s or later",
					from.Format(time.RFC3339), in.Live.Source.KeptFor(), oldest.UTC().Format(time.RFC3339))}})
			return
		}
		settle, ok := boolParam(w, r, "settle")
		if !ok {
			return
		}
		var (
			rep      cost.Report
			st       cost.Settlement
			problems []string
			err      error
		)
		if settle {
			rep, st, problems, err = in.Live.Source.Settle(r.Context(), from, until)
		} else {
			rep, problems, err = in.Live.Source.Cost(r.Context(), from, until)
		}
		if err != nil {
			writeErr(w, err)
			return
		}
		// A row per job is a row per job run in the window: only on request.
		if r.URL.Query().Get("jobs") != "true" {
			rep.Jobs = nil
		}
		body := map[string]any{"report": rep, "summary": insight.CostViewOf(rep), "problems": problems}
		if settle {
			body["settlement"] = st
		}
		writeJSON(w, http.StatusOK, body)
	}))
	mux.HandleFunc("GET /api/v1/recommendations", h.guard(func(w http.ResponseWriter, r *http.Request) {
		from, until, ok := window(w, r)
		if !ok {
			return
		}
		win, recs, err := in.Live.Source.Advise(r.Context(), from, until)
		if err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"window": win, "recommendations": recs})
	}))
	if in.Dashboard != nil {
		mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
		})
		mux.HandleFunc("GET /dashboard", h.login(in.Dashboard))
		mux.Handle("GET /dashboard/", in.Dashboard)
	}
}

// login takes ?token= once: a right token becomes a cookie and the page is
// loaded again without it, so the token does not stay in the address bar
// or the history. The page itself holds no data; its requests are guarded.
func (h *handler) login(next http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok := r.URL.Query().Get("token")
		if tok == "" || !h.auth {
			next.ServeHTTP(w, r)
			return
		}
		if !h.tokenOK(tok) {
			writeJSON(w, http.StatusUnauthorized, intake.ErrorBody{Error: intake.Error{Code: intake.CodeUnauthorized,
				Message: "wrong token: open /dashboard?token=TOKEN with the controller's API token"}})
			return
		}
		// Secure whenever the browser reached us over TLS, directly or
		// through a proxy that terminated it.
		secure := r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
		http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: h.newSession(), Path: "/", HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: secure})
		http.Redirect(w, r, "/dashboard", http.StatusSeeOther)
	}
}

// stream sends the overview as Server-Sent Events, one "overview" event per
// period, until the client goes away. An error is sent as an "error" event
// and the stream goes on: Redis coming back heals the page by itself.
func (h *handler) stream(w http.ResponseWriter, r *http.Request, live *insight.Live, span insight.Span, every time.Duration) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeJSON(w, http.StatusInternalServerError, intake.ErrorBody{Error: intake.Error{Code: intake.CodeInternal,
			Message: "this server cannot stream"}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no") // proxies must not hold events back
	w.WriteHeader(http.StatusOK)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		event, body := "overview", []byte(nil)
		o, err := live.OverviewSpan(r.Context(), span)
		if err == nil {
			body, err = json.Marshal(o)
		}
		if err != nil {
			event, body = "error", []byte(fmt.Sprintf("%q", err.Error()))
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, body); err != nil {
			return
		}
		fl.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
		}
	}
}

// spanOf reads ?span= (one of insight.Spans; none means the default).
func spanOf(w http.ResponseWriter, r *http.Request) (insight.Span, bool) {
	name := r.URL.Query().Get("span")
	if name == "" {
		return insight.Span{}, true
	}
	sp, ok := insight.SpanNamed(name)
	if !ok {
		names := make([]string, 0, len(insight.Spans))
		for _, s := range insight.Spans {
			names = append(names, s.Name)
		}
		writeJSON(w, http.StatusBadRequest, intake.ErrorBody{Error: intake.Error{Code: intake.CodeInvalid,
			Message: fmt.Sprintf("span %q: use one of %s", name, strings.Join(names, ", "))}})
	}
	return sp, ok
}

// window reads ?window=24h (ending now) or ?from=&until= (RFC 3339).
func window(w http.ResponseWriter, r *http.Request) (time.Time, time.Time, bool) {
	q := r.URL.Query()
	bad := func(msg string) (time.Time, time.Time, bool) {
		writeJSON(w, http.StatusBadRequest, intake.ErrorBody{Error: intake.Error{Code: intake.CodeInvalid, Message: msg}})
		return time.Time{}, time.Time{}, false
	}
	until := time.Now().UTC()
	if s := q.Get("until"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return bad("until: give an RFC 3339 time such as 2026-11-29T00:00:00Z")
		}
		until = t
	}
	from := until.Add(-24 * time.Hour)
	if s := q.Get("window"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return bad("window: give a positive duration such as 24h or 90m")
		}
		from = until.Add(-d)
	}
	if s := q.Get("from"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return bad("from: give an RFC 3339 time such as 2026-11-28T00:00:00Z")
		}
		from = t
	}
	if !from.Before(until) {
		return bad("from must be before until")
	}
	if until.Sub(from) > MaxWindow {
		return bad(fmt.Sprintf("the window is %s; ask for at most %s", until.Sub(from), MaxWindow))
	}
	return from, until, true
}

// boolParam reads ?name= as a boolean (1, true, 0, false; absent is
// false), answering 400 for anything else.
func boolParam(w http.ResponseWriter, r *http.Request, name string) (bool, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, true
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, intake.ErrorBody{Error: intake.Error{Code: intake.CodeInvalid,
			Message: fmt.Sprintf("%s %q: give true or false", name, v)}})
		return false, false
	}
	return b, true
}
