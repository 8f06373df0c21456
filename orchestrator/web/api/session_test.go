package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/web/api"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/usage"
)

// consoleRig is an API over a real store with one template, and a client
// that does not follow redirects, so a test sees the login's cookie.
type consoleRig struct {
	t     *testing.T
	store *queues.Store
	srv   *httptest.Server
}

func newConsoleRig(t *testing.T, token string) *consoleRig {
	t.Helper()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	cat, err := jobs.NewCatalog(map[string]jobs.Template{"etl": {Command: []string{"true"}, Class: jobs.ClassCore,
		Params: map[string]jobs.ParamSpec{"day": {Type: jobs.ParamString, Default: "mon"}}}})
	if err != nil {
		t.Fatal(err)
	}
	sub := &controller.Submitter{Catalog: cat, Store: store}
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html></html>")) })
	srv := httptest.NewServer(api.Handler(store, sub, token, api.Flows{}, api.Insight{Live: &insight.Live{Source: insight.Source{Store: store, Accounting: usage.New(store)}}, Dashboard: page}))
	t.Cleanup(srv.Close)
	return &consoleRig{t: t, store: store, srv: srv}
}

// do sends a request with the headers given and returns its status and
// decoded body.
func (c *consoleRig) do(method, path string, cookie *http.Cookie, header map[string]string) (int, map[string]any) {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.srv.URL+path, nil)
	for k, v := range header {
		if k == "Host" { // Go sends req.Host, never a Host header
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	if cookie != nil {
		req.AddCookie(cookie)
	}
	cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := cl.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// login opens /dashboard?token= and returns the session cookie.
func (c *consoleRig) login(token string) *http.Cookie {
	c.t.Helper()
	cl := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := cl.Get(c.srv.URL + "/dashboard?token=" + token)
	if err != nil {
		c.t.Fatal(err)
	}
	res.Body.Close()
	for _, ck := range res.Cookies() {
		if ck.Name == "ballast_token" {
			return ck
		}
	}
	c.t.Fatalf("login: %d, no cookie", res.StatusCode)
	return nil
}

func (c *consoleRig) submit(key string) jobs.Job {
	c.t.Helper()
	s, err := c.store.Submit(c.t.Context(), jobs.Spec{Template: "etl", Team: "data", Command: []string{"true"}, Class: jobs.ClassCore,
		Rhythm: jobs.RhythmPeriodic, Timeout: jobs.Duration(time.Hour), Grace: jobs.Duration(time.Second), IdempotencyKey: key,
		Params: map[string]any{"day": "tue"}, Labels: map[string]string{"env": key}}, queues.QueueCore)
	if err != nil {
		c.t.Fatal(err)
	}
	return s.Job
}

// TestConsoleWritesNeedTheSessionsToken: a console write carries the
// session cookie and that session's write token; a forged one (no token,
// another session's, another origin, a cross-site fetch) is refused and
// changes nothing, while the bearer token acts as before.
func TestConsoleWritesNeedTheSessionsToken(t *testing.T) {
	t.Parallel()
	c := newConsoleRig(t, "s3cret-token")
	j := c.submit("a")
	cookie, other := c.login("s3cret-token"), c.login("s3cret-token")
	if cookie.Value == other.Value {
		t.Fatalf("two logins share a session: %q", cookie.Value)
	}
	if code, _ := c.do("GET", api.SessionPath, nil, nil); code != http.StatusUnauthorized {
		t.Errorf("session without a cookie: %d", code)
	}
	token := func(ck *http.Cookie) string {
		code, body := c.do("GET", api.SessionPath, ck, nil)
		tok, _ := body["csrf_token"].(string)
		if code != http.StatusOK || len(tok) < 32 {
			t.Fatalf("session: %d %v", code, body)
		}
		return tok
	}
	mine, theirs := token(cookie), token(other)
	if mine == theirs {
		t.Fatal("two sessions share a write token")
	}
	cancel := "/api/v1/jobs/" + j.ID + "/cancel"
	host := strings.TrimPrefix(c.srv.URL, "http://")
	forged := []struct {
		name   string
		cookie *http.Cookie
		header map[string]string
		want   int
	}{
		{"cookie alone (a form another site posts)", cookie, nil, http.StatusForbidden},
		{"another session's token", cookie, map[string]string{api.CSRFHeader: theirs}, http.StatusForbidden},
		{"a wrong token", cookie, map[string]string{api.CSRFHeader: strings.Repeat("0", len(mine))}, http.StatusForbidden},
		{"the right token from another origin", cookie, map[string]string{api.CSRFHeader: mine, "Origin": "http://evil.example"}, http.StatusForbidden},
		{"the right token, a cross-site fetch", cookie, map[string]string{api.CSRFHeader: mine, "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"a token without a cookie", nil, map[string]string{api.CSRFHeader: mine}, http.StatusUnauthorized},
		{"a forged cookie", &http.Cookie{Name: "ballast_token", Value: strings.Repeat("a", 32) + "." + strings.Repeat("b", 64)},
			map[string]string{api.CSRFHeader: mine}, http.StatusUnauthorized},
	}
	for _, f := range forged {
		if code, body := c.do("POST", cancel, f.cookie, f.header); code != f.want {
			t.Errorf("%s: %d %v, want %d", f.name, code, body, f.want)
		}
	}
	if got, _ := c.store.Get(t.Context(), j.ID); got.State != jobs.StateQueued {
		t.Fatalf("a refused write changed the job: %s", got.State)
	}
	code, body := c.do("POST", cancel, cookie, map[string]string{api.CSRFHeader: mine, "Origin": c.srv.URL, "Sec-Fetch-Site": "same-origin", "Host": host})
	if code != http.StatusOK {
		t.Fatalf("the console's own cancel: %d %v", code, body)
	}
	if got, _ := c.store.Get(t.Context(), j.ID); got.State != jobs.StateCancelled {
		t.Fatalf("after the console's cancel the job is %s", got.State)
	}

	// Retry makes a new job from the finished one; a job still queued is
	// refused.
	queued := c.submit("b")
	if code, body := c.do("POST", "/api/v1/jobs/"+queued.ID+"/retry", nil, map[string]string{"Authorization": "Bearer s3cret-token"}); code != http.StatusConflict {
		t.Errorf("retry of a queued job: %d %v", code, body)
	}
	code, body = c.do("POST", "/api/v1/jobs/"+j.ID+"/retry", cookie, map[string]string{api.CSRFHeader: mine})
	receipt, _ := body["receipt"].(map[string]any)
	id, _ := receipt["job_id"].(string)
	if code != http.StatusCreated || id == "" || id == j.ID {
		t.Fatalf("retry: %d %v", code, body)
	}
	nj, err := c.store.Get(t.Context(), id)
	if err != nil || nj.Spec.Labels[jobs.RetryOfLabel] != j.ID || nj.Spec.Params["day"] != "tue" || nj.Spec.Team != "data" || nj.State != jobs.StateQueued {
		t.Fatalf("the retried job %+v %v", nj, err)
	}
}

// TestDevModeWritesRefuseOtherSites: without a token the CLI's plain
// requests act, but a browser's need the page's write token, so a page on
// another site cannot cancel jobs on a controller listening on localhost.
func TestDevModeWritesRefuseOtherSites(t *testing.T) {
	t.Parallel()
	c := newConsoleRig(t, "")
	j := c.submit("a")
	cancel := "/api/v1/jobs/" + j.ID + "/cancel"
	for _, h := range []map[string]string{{"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-origin"}} {
		if code, body := c.do("POST", cancel, nil, h); code != http.StatusForbidden {
			t.Errorf("browser write %v: %d %v, want 403", h, code, body)
		}
	}
	if got, _ := c.store.Get(t.Context(), j.ID); got.State != jobs.StateQueued {
		t.Fatalf("a refused write changed the job: %s", got.State)
	}
	// A page whose name was re-pointed at this machine (DNS rebinding) is
	// same-origin in its browser, but names itself in Host.
	if code, body := c.do("GET", api.SessionPath, nil, map[string]string{"Host": "rebound.example:8480"}); code != http.StatusForbidden {
		t.Errorf("session asked under another host name: %d %v", code, body)
	}
	_, body := c.do("GET", api.SessionPath, nil, nil)
	tok, _ := body["csrf_token"].(string)
	if code, body := c.do("POST", cancel, nil, map[string]string{"Host": "rebound.example:8480", "Origin": "http://rebound.example:8480",
		"Sec-Fetch-Site": "same-origin", api.CSRFHeader: tok}); code != http.StatusForbidden {
		t.Errorf("a rebound page's write: %d %v", code, body)
	}
	if code, body := c.do("POST", cancel, nil, map[string]string{"Sec-Fetch-Site": "same-origin", api.CSRFHeader: tok}); code != http.StatusOK {
		t.Fatalf("the page's own write: %d %v", code, body)
	}
	k := c.submit("b")
	if code, body := c.do("POST", "/api/v1/jobs/"+k.ID+"/cancel", nil, nil); code != http.StatusOK {
		t.Fatalf("a plain write (the CLI's): %d %v", code, body)
	}
}

// TestJobListFiltersAndPages: the list's query parameters reach the store,
// and a bad one is a 400 naming it.
func TestJobListFiltersAndPages(t *testing.T) {
	t.Parallel()
	c := newConsoleRig(t, "")
	var ids []string
	for _, k := range []string{"a", "b", "c"} {
		ids = append(ids, c.submit(k).ID)
	}
	list := func(q string) (int, []string, string) {
		t.Helper()
		code, body := c.do("GET", "/api/v1/jobs?"+q, nil, nil)
		var got []string
		js, _ := body["jobs"].([]any)
		for _, x := range js {
			got = append(got, x.(map[string]any)["id"].(string))
		}
		next, _ := body["next"].(string)
		return code, got, next
	}
	if code, got, _ := list("label=env%3Db&class=core&team=data&template=etl&since=1h"); code != 200 || len(got) != 1 || got[0] != ids[1] {
		t.Errorf("label filter: %d %v, want [%s]", code, got, ids[1])
	}
	if _, got, _ := list("class=burst"); len(got) != 0 {
		t.Errorf("class=burst: %v", got)
	}
	if _, got, _ := list("pool=nowhere"); len(got) != 0 {
		t.Errorf("pool=nowhere: %v", got)
	}
	if _, got, _ := list("id=" + ids[2][:27]); len(got) != 1 || got[0] != ids[2] {
		t.Errorf("id prefix: %v", got)
	}
	code, first, next := list("limit=2")
	if code != 200 || len(first) != 2 || next == "" {
		t.Fatalf("first page: %d %v next %q", code, first, next)
	}
	if _, rest, more := list("limit=2&after=" + next); len(rest) != 1 || more != "" || rest[0] == first[0] || rest[0] == first[1] {
		t.Errorf("second page: %v next %q after %v", rest, more, first)
	}
	for _, q := range []string{"limit=0", "state=done", "class=gpu", "label=novalue", "since=yesterday", "id=XYZ", "after=nope", "since=1h&until=2h"} {
		code, body := c.do("GET", "/api/v1/jobs?"+q, nil, nil)
		msg, _ := body["error"].(map[string]any)["message"].(string)
		name := strings.SplitN(q, "=", 2)[0]
		if code != http.StatusBadRequest || !strings.Contains(msg, name) {
			t.Errorf("%s: %d %q, want a 400 naming %s", q, code, msg, name)
		}
	}
}
