// Package e2e runs Ballast as its users do: real Redis and NATS, the
// ballast binary's processes (controller, workers, the CLI), jobs
// submitted over the wire, and the figures and records they leave. It has
// only tests.
package e2e
