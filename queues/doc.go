// Package queues is Ballast's Redis layer: queue names, task encoding, the job
// store with its fencing scripts, the enqueue outbox, the worker registry and
// job logs. Every Redis key Ballast writes is named in keys.go.
//
// The job record is the truth about a job; an asynq task is only one delivery
// of one attempt. Every state change is a Lua script that first checks the
// attempt, so a stale delivery, a late worker or a racing controller can never
// move a job that has moved on.
//
// Redis Cluster is not supported: the scripts touch a job's record together
// with shared indexes.
package queues
