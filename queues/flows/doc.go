// Package flows keeps what Ballast runs on top of jobs: pipeline runs with
// their steps, and sweeps with their trials. A run or a sweep is a parent
// record; its children are ordinary jobs, kept by the job store (package
// queues), which this package never writes.
//
// What it owns, each under the namespace's prefix (so its hash tag) and
// under the names these keys had while queues kept them:
//   - runs: "run:ID" (a hash: state, schedule, the copied definition and
//     "step:NAME" / "job:NAME" per step), "runs:active" (runs not ended),
//     "pipeline:NAME:runs" (each pipeline's run index, newest kept),
//     "pipeline:NAME:handled" (the cursor of times handled) and
//     "fired:KEY" (a firing's dedupe key, so two controllers create one
//     run);
//   - sweeps: "sweep:ID" (the record), "sweep:ID:specs" (the resolved
//     trial specs), "sweep:ID:trials" (trial index to job),
//     "sweep:ID:stopped" (trials the median rule stopped), "sweeps" (the
//     index by creation), "sweeps:active" and "idem-sweep:KEY" (a client's
//     idempotency key to its sweep).
//
// Each change is one command, Lua script or MULTI beside the Go that
// sends it, so a run's steps, a sweep's cursor and its trials move
// together. The store reaches Redis only through its Kernel (the job
// store), whose IdempotencyTTL a sweep's key shares.
//
// What stays in the job store: a trial or a step becomes a job through
// the controller's submitter, like any submission, with an idempotency
// key derived from its parent (TrialIdempotencyKey here, pipeline.StepSpec
// for a step); the job record and that key are written in one script by
// queues, not by this package. So the reads
// that need them are queues': queues.Store.JobBriefs (where the children
// are), JobsByKey (the trials a fan-out submitted and died before
// recording) and RunTimes (how long a step's jobs ran, for StepJobs'
// history); the controller puts the two halves together.
//
// Why apart: runs and sweeps change on the controller's ticks and through
// the flow endpoints, never on a worker's path, and no job script reads
// them. Kept in the job store they widened its API for every user; here
// the pipelines and sweeps loops and the API hold exactly this store
// (their RunBook, SweepBook and FlowDesk), and the job store's own
// interfaces say nothing of flows.
package flows
