// Package insight reads what Ballast is doing and what it cost from the
// live store: the cost ledger of a window (from the usage entries the
// attempt scripts write and the worker lives, both read through
// queues/usage), the advisor's window, and the Overview that the
// dashboard, the API and `ballast top` show.
//
// The pure parts live elsewhere: cost prices a ledger, advisor turns a
// window into advice. This package gathers their inputs, so what the
// dashboard says and what a test computes by hand from the same records
// cannot drift apart. It writes in one place only: the leader's Collector
// records the sampled series the charts read and trims the accounting
// past its retention, since the charts are what those series are for.
package insight
