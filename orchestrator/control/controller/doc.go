// Package controller is Ballast's control plane.
//
// Submitter is the intake's business logic: it validates a submission
// against the template catalog, routes it to its queue (router.go) and
// records and enqueues it. Sweeps accepts sweeps on any controller.
//
// Controller is the loop every controller process runs; several may run,
// and only the holder of the Redis lease acts. Each tick, every controller
// checks the namespace's epoch, so that a loss of Redis data is noticed
// and reported (dataloss.go; Recover rebuilds lost jobs from the event
// stream). The leader then recovers the jobs of workers whose heartbeat
// stopped, moves on attempts taken but never claimed (held.go), reconciles
// the enqueue outbox, trims the job index, advances pipelines and sweeps
// (also at once, when poked), and runs the capacity tick.
//
// Hybrid is that capacity tick: it keeps a view of the active jobs across
// ticks (livestate.go, refreshed early by Changed hints), runs the pure
// policy's Decide, and applies the plan through a provider: launching and
// releasing workers, placing sized jobs and taking back placements their
// workers will never start (placement.go), and moving core jobs to
// on-demand capacity under rule 7 (overflow.go).
package controller
