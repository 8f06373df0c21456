// Package controller is Ballast's control plane: the Submitter that validates
// submissions against the templates and routes them into queues, and the
// leader-elected loop that recovers the jobs of dead workers within seconds
// and enqueues attempts whose task was never confirmed; and Hybrid, the
// adapter that runs the capacity policy each leader tick from a view it
// keeps across ticks (livestate.go).
package controller
