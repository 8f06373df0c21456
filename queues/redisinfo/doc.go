// Package redisinfo reads what the Redis under a namespace is, as opposed
// to what it holds: whether its settings keep accepted jobs across a
// restart and under memory pressure (CheckDurability, judged by
// DurabilityOf), and its topology, the masters serving the namespace now
// (Topology). The controller warns and exports a metric from the first;
// status and the overview show both.
//
// It writes no key. It reads Redis's CONFIG (appendonly, appendfsync,
// save, maxmemory-policy), the client's view of its nodes, and on a
// cluster the slot of the namespace's hash tag (Namespace.Outbox names
// it); errors of either read are reported in the result, not returned,
// so a managed Redis that refuses CONFIG still runs Ballast.
//
// It is apart from the kernel (queues) because it touches no job record.
// What is about Redis and does touch them stays in the kernel:
//   - the epoch and its watch (CheckEpoch, EpochWatch, DataLoss): the
//     check's script reads the job index and the newest job's record to
//     tell a loss from an expiry, so it must run beside them;
//   - Restore, which rebuilds job records from the event stream with the
//     kernel's fencing;
//   - the wait for replicas (StoreOptions.WaitReplicas, RunDurable): it
//     is how every durable script of the kernel and of the concern
//     stores acknowledges a write.
package redisinfo
