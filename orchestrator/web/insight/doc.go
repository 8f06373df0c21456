// Package insight reads what Ballast is doing and what it cost from the
// live store: the cost ledger of a window (from the usage entries the
// attempt scripts write and the worker lives the registry keeps), the
// advisor's window, and the Overview that the dashboard, the API and
// `ballast top` show.
//
// The pure parts live elsewhere: cost prices a ledger, advisor turns a
// window into advice. This package only gathers their inputs, so what the
// dashboard says and what a test computes by hand from the same records
// cannot drift apart.
package insight
