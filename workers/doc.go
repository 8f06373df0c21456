// Package workers is Ballast's worker runtime. A Worker consumes asynq queues
// in strict priority, claims each delivery against the job record (dropping
// stale ones; on one Redis the shared queues' deliveries are taken and
// claimed in one script, see taker.go), runs the job as a subprocess or an
// in-process Go handler with the checkpoint contract, keeps its output, records its end, retries
// retryable failures as new attempts, heartbeats into the worker registry and
// drains on stop: running jobs get the drain timeout to finish, then are
// checkpointed and requeued.
//
// Control requests (cancel, preempt, drain, spot notice) are records in
// Redis; a NATS control message only makes the worker beat now, and the
// worker acts on what the beat reads. Each process start registers a random
// incarnation with its ID, so a restart under the same ID takes over (and
// requeues) what the previous process held, and that process, if it wakes,
// is fenced: its jobs are killed and it goes on under a new identity
// (heartbeat.go). A worker that cannot renew its registration fences
// itself before the controller could run its jobs elsewhere (fence.go).
//
// A gang member's delivery is joined through queues/gangs (gang.go): one
// call claims the member and waits for the rest at the start barrier, and
// the worker only acts on the answer.
//
// With Options.GPUs set, a slot is a GPU (or a MIG instance) and each
// attempt is bound to GPUs of its own; jobs that ask for a share of a GPU
// are packed onto one device, which holds one slot between them (see
// shares.go and package gpu).
//
// With Options.CheckpointStore set, checkpoint directories travel: each
// reported checkpoint is uploaded beside the job and committed fenced
// before its token becomes the resume point, and the newest committed one
// is restored before an attempt starts (see ckstore.go, ckupload.go and
// package checkpoint).
//
// With Options.Isolation set, each process job runs in its QoS group's
// cgroup (see package isolation), and its cgroup's counters go into the job
// record when it ends. In-process Go handlers run inside the worker and are
// not isolated.
package workers
