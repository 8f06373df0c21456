// Package queues is the kernel of Ballast's Redis layer: job records and
// their fencing, the namespace's keys (keys.go), task encoding, the Lua
// scripts that move a job, and jobs and deliveries themselves (Store).
// Stores of one concern live in the packages below it (checkpoints,
// flows, gangs, leader, logs, redisinfo, registry, usage); each keeps its
// own scripts and reaches Redis only through a Kernel (kernel.go), which
// *Store implements, so every key still carries the namespace's hash tag.
//
// The job record is the truth about a job; an asynq task is only one
// delivery of one attempt. Every state change is a Lua script that first
// checks the attempt, so a stale delivery, a late worker or a racing
// controller can never move a job that has moved on (ErrFenced).
//
// What the kernel keeps, by concern, and where the rest went:
//   - jobs: records, submission with idempotency keys and the enqueue
//     outbox, claims, ends, requeues, cancels, listing and history;
//   - deliveries: queue names, task encoding, Take (taking and claiming
//     in one script), readmitted work first, placements of sized jobs;
//   - gangs: the protocol is queues/gangs; the kernel keeps a member's end
//     and the gang's fencing on membership in its own scripts;
//   - workers: registration and heartbeats, attempts a worker no longer
//     runs, QoS counters; the worker list and intents (drain, spot
//     notices) are in queues/registry (a store on Kernel);
//   - the controller: held tasks, dead-worker recovery; the leader lease
//     is queues/leader's;
//   - capacity and cost: queue statistics, and the usage entries and
//     worker lives the end of an attempt and a worker's heartbeat write;
//     reading, launches, series and trimming are queues/usage's;
//   - flows: pipeline runs and sweeps live in queues/flows; the job store
//     keeps their jobs and answers JobsByKey and RunTimes for them;
//   - checkpoints: the token a running attempt reports (Checkpoint), a
//     field of its record the ends read; the ledger of committed
//     manifests, upload times and forgetting is queues/checkpoints;
//   - logs: job output lines, in queues/logs (a store on Kernel);
//   - Redis itself: the epoch that detects a loss of data (DataLoss),
//     Restore of jobs rebuilt from the event stream, waiting for replicas
//     to hold a submission; its durability settings and Topology, which
//     touch no record, are queues/redisinfo's.
//
// Every key of a namespace carries the namespace's hash tag ("{NAME}:..."),
// so on Redis Cluster the whole namespace is one slot and every script and
// MULTI stays on one shard; a script derives keys only from prefixes its
// caller passes. asynq's keys are tagged by queue, so on a cluster a new
// job's task is enqueued after its record, not in the same script
// (StoreOptions.SeparateEnqueue, set by NewStore for a cluster client), and
// workers consume through asynq's server; on one Redis they take and claim
// deliveries in one script (Take). MigrateKeys moves an installation from
// the untagged names.
package queues
