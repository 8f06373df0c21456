// Package queues is Ballast's Redis layer: queue names, task encoding, the job
// store with its fencing scripts, the enqueue outbox, the worker registry and
// job logs. Every Redis key Ballast writes is named in keys.go.
//
// The job record is the truth about a job; an asynq task is only one delivery
// of one attempt. Every state change is a Lua script that first checks the
// attempt, so a stale delivery, a late worker or a racing controller can never
// move a job that has moved on.
//
// Every key of a namespace carries the namespace's hash tag ("{NAME}:..."),
// so on Redis Cluster the whole namespace is one slot and every script and
// MULTI stays on one shard; a script derives keys only from prefixes its
// caller passes. asynq's keys are tagged by queue, so on a cluster a new
// job's task is enqueued after its record, not in the same script
// (StoreOptions.SeparateEnqueue, set by NewStore for a cluster client), and
// workers consume through asynq's server; on one Redis they take and claim
// deliveries in one script (Take).
// MigrateKeys moves an installation from the untagged names; Topology says
// what the client is connected to.
package queues
