// Package dashboard serves the controller's web dashboard: one page and
// its script and style, embedded in the binary so the page needs nothing
// but the controller (no CDN, no external fonts, no build step).
//
// The page reads GET /api/v1/overview once, then follows
// GET /api/v1/overview/stream (Server-Sent Events) and redraws on each
// event; when the stream fails it polls every two seconds and marks
// itself stale after five seconds without an update. Authentication is
// the API's business: the controller sets the token cookie before it
// hands a request to Handler.
//
// The span of the charts (1h, 6h or 24h, insight.Spans) is chosen with
// buttons above them and kept in the address as #span=NAME; the page
// then asks both endpoints for ?span=NAME, and for no span (the API's
// default) when the address names none or one the API does not offer.
//
// The jobs console (jobs.js) lists GET /api/v1/jobs, filtered by state,
// every few seconds, and opens one job's page from the list: its record
// and output (GET /api/v1/jobs/{id} and .../logs), kept in the address
// as #job=ID beside #span=.
//
// Every number on the page carries a data-k attribute naming it (for
// example pool.fixed.busy or cost.team.ml.cost) and, where the shown text
// is rounded, a data-v attribute with the raw JSON value, so a test can
// compare the page with the API exactly.
package dashboard
