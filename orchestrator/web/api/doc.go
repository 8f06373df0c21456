// Package api is the controller's HTTP server. Handler mounts, on one mux:
//
//   - submission of jobs and sweeps (the intake package's HTTP handlers);
//   - jobs: list, show, logs, attempts (with reasons and prices), kept
//     checkpoints, cancel and retry;
//   - sweeps and pipeline runs: list, show, cancel, and trigger a pipeline;
//   - status: leader, workers, queues, recent jobs by state, overflowed
//     core jobs, the Redis in use and any recorded data loss
//     (CollectStatus, which the CLI also calls on the store directly);
//     /healthz and, when given, Prometheus /metrics;
//   - with a live insight reader: the overview (and its event stream),
//     costs, recommendations, and the dashboard behind a console login.
//
// Requests carry a bearer token; the dashboard's reads may use its session
// cookie instead, and its writes a CSRF token as well (session.go). An
// empty token turns authentication off, for dev on localhost. Bodies are
// JSON; openapi.json describes every route, and its test keeps the two in
// step.
package api
