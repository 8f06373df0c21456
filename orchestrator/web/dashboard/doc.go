// Package dashboard serves the controller's web dashboard: one page and
// its script and style, embedded in the binary so the page needs nothing
// but the controller (no CDN, no external fonts, no build step).
//
// The page reads GET /api/v1/overview once, then follows
// GET /api/v1/overview/stream (Server-Sent Events) and redraws on each
// event; when the stream fails it polls every two seconds and marks
// itself stale after five seconds without an update. Authentication is
// the API's business: its login swaps a ?token= for a signed session
// cookie before it hands a request to Handler.
//
// The span of the charts (1h, 6h or 24h, insight.Spans) is chosen with
// buttons above them and kept in the address as #span=NAME; the page
// then asks both endpoints for ?span=NAME, and for no span (the API's
// default) when the address names none or one the API does not offer.
//
// The console's pages share the one document: console.js reads the
// address (#view=jobs|pipelines|sweeps, or #job=ID, #run=ID, #sweep=ID
// beside #span=) and shows that page's sections, so any page can be linked
// and `ballast-tools screenshot --page` can open it; each page marks
// itself drawn in body[data-ready].
//
//   - jobs.js: the jobs list, filtered (state, template, team, class, pool,
//     label, creation time, ID prefix) and paged by the API's cursor; a
//     job's page with its record and parameters, every attempt with why it
//     began and ended, where it ran and its cost (GET .../attempts), the
//     checkpoints it keeps in the checkpoint store with when each was
//     made, its size, the bytes its upload wrote and its upload time
//     (GET .../checkpoints), its output followed live
//     (GET .../logs?after=), and cancel and retry.
//   - flows.js: pipelines with their latest runs and a trigger button; a
//     run's DAG drawn in SVG with each step's state; sweeps; a sweep's
//     trials with their parameters and metric, the metric drawn against a
//     parameter, the best trial marked; cancel of a run or a sweep.
//
// Writes carry the session's write token (GET /api/v1/session) in the
// X-Ballast-CSRF header; the cookie alone only reads (see package api).
//
// The cost view also reads GET /api/v1/costs?settle=true over the
// overview's cost window, at most once a minute, and shows the
// settlement between teams when the quota has shares.
//
// Charts draw buckets without data (before Ballast started, or with
// nothing measured) as shaded gaps, never as zeros.
//
// Every number on the page carries a data-k attribute naming it (for
// example pool.fixed.busy or cost.team.ml.cost) and, where the shown text
// is rounded, a data-v attribute with the raw JSON value, so a test can
// compare the page with the API exactly.
package dashboard
