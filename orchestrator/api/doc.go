// Package api is the controller's HTTP API: submission (from the intake
// package) plus reading jobs, their logs, cancelling them, and the status of
// workers and queues. JSON throughout, bearer-token auth. openapi.json
// describes every route, and its test keeps the two in step.
package api
