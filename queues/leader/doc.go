// Package leader keeps the controller leader lease: several controllers
// may run, and only the holder of the lease acts (Acquire, Resign); status
// pages read who holds it (Holder).
//
// It owns one key, Namespace.Leader() ("{NAME}:leader"), a string holding
// the leading controller's ID with the lease's expiry. It writes and reads
// nothing else.
//
// It is apart from the kernel (queues) because no job record depends on
// the lease: no kernel script reads it, and a stale leader is kept from
// moving a job by the records' fencing, not by this key. The only other
// reader is queues.MigrateKeys, which refuses to move the keys of an
// installation whose controller holds the lease.
package leader
