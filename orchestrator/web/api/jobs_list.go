package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// list serves GET /api/v1/jobs: the job index newest first, filtered and
// paged on the server so the console never downloads more than one page.
func (h *handler) list(w http.ResponseWriter, r *http.Request) {
	o, err := pageOptions(r.URL.Query(), time.Now())
	if err != nil {
		writeJSON(w, http.StatusBadRequest, intake.ErrorBody{Error: intake.Error{Code: intake.CodeInvalid, Message: err.Error()}})
		return
	}
	page, err := h.jobs.ListPage(r.Context(), o)
	if errors.Is(err, queues.ErrBadCursor) {
		writeJSON(w, http.StatusBadRequest, intake.ErrorBody{Error: intake.Error{Code: intake.CodeInvalid, Message: "after: " + err.Error()}})
		return
	}
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// pageOptions reads the list's query. Every bad value is an error naming
// the parameter and what it takes; nothing is silently dropped.
func pageOptions(q url.Values, now time.Time) (queues.PageOptions, error) {
	var o queues.PageOptions
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 || n > 1000 {
			bad("limit %q: give a number from 1 to 1000", s)
		}
		o.Limit = n
	}
	if st := jobs.State(q.Get("state")); st != "" {
		if !st.Valid() {
			bad("state %q: use queued, running, succeeded, failed or cancelled", st)
		}
		o.State = st
	}
	if c := q.Get("class"); c != "" {
		cl, err := jobs.ParseClass(c)
		if err != nil {
			bad("class %q: use core or burst", c)
		}
		o.Class = cl
	}
	o.Template, o.Team, o.Pool = q.Get("template"), q.Get("team"), q.Get("pool")
	for _, l := range q["label"] {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			bad("label %q: give KEY=VALUE", l)
			continue
		}
		if o.Labels == nil {
			o.Labels = map[string]string{}
		}
		o.Labels[k] = v
	}
	var err error
	if o.Since, err = instant(q.Get("since"), now); err != nil {
		bad("since: %v", err)
	}
	if o.Until, err = instant(q.Get("until"), now); err != nil {
		bad("until: %v", err)
	}
	if !o.Since.IsZero() && !o.Until.IsZero() && !o.Since.Before(o.Until) {
		bad("since must be before until")
	}
	if p := q.Get("id"); p != "" {
		if len(p) > 28 || strings.Trim(p, "0123456789abcdef") != "" {
			bad("id %q: give the start of a job ID (lowercase hex, at most 28 digits)", p)
		}
		o.IDPrefix = p
	}
	o.After = q.Get("after")
	if len(problems) > 0 {
		return o, errors.New(strings.Join(problems, "; "))
	}
	return o, nil
}

// instant reads an RFC 3339 time, or a duration meaning that long before
// now ("90m", "24h"); "" is no bound.
func instant(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: give an RFC 3339 time such as 2026-11-29T08:00:00Z or a duration back from now such as 24h", s)
	}
	return t, nil
}
