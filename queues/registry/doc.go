// Package registry reads the worker registry and records the intents
// addressed to whole workers: the list of live workers with what each
// reported of itself (Workers), and the drains and spot notices the
// controller asks for (RequestDrain, RequestSpotNotice).
//
// Keys, all built by queues.Namespace: it reads the sorted set of live
// workers by last heartbeat (Workers) and, in each worker's hash
// (Worker(id)), the fields "info", "life" and "spot_pool"; it writes only
// the intent fields queues.IntentDrainField and IntentSpotField there. It
// creates no key: an intent is only recorded on a worker that is
// registered.
//
// It is apart from the kernel (queues) because none of this changes a job:
// a reader of the list or a drain request needs no fencing of records.
// What does stays in the kernel, beside the scripts it shares with the
// job records:
//   - registration, heartbeats, leaving and deregistration
//     (queues.Store.Register, Heartbeat, Leave, Deregister): a beat checks
//     the worker's running attempts against their records, and a new
//     incarnation's registration requeues its predecessor's jobs, in the
//     same script that writes the entry, and they open and close the
//     worker's life in the usage ledger;
//   - dead-worker recovery (RecoverDeadWorkers, RecoverWorker), which
//     requeues the worker's jobs;
//   - RecordQoS, a fenced write to the attempt's job record, as
//     checkpoints and metrics are;
//   - the types the heartbeat writes (queues.WorkerInfo with its
//     Isolation and GPUs), since the kernel cannot import this package.
//
// The heartbeat script reads the intent fields this package writes, and
// drops them with the entry when a new incarnation registers; the field
// names, the contract between the two, are the kernel's constants.
package registry
