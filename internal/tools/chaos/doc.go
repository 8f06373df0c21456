// Package chaos runs a whole Ballast installation as separate processes (its
// own redis-server and NATS server, controllers and workers re-executed from
// the ballast binary), submits jobs that each record one side effect, injects
// the faults Ballast claims to survive, and counts what became of every job:
// accepted, succeeded once, side effects doubled, lost, and how long a
// killed worker's jobs took to be requeued. `ballast chaos run` is its
// command; a short run is part of the tests.
package chaos
