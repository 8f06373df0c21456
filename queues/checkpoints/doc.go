// Package checkpoints is the ledger of the checkpoints workers upload for
// their jobs: which manifests a job committed, newest first, and how long
// uploads took. workers/checkpoint saves and restores through a Ledger;
// the API and the CLI list what a job keeps; `ballast simulate
// --checkpoint-overhead measured` reads the upload times.
//
// # Keys
//
//	job:ID:checkpoints  the job's committed manifest keys, newest first,
//	                    trimmed to the saver's keep; no expiry of its own,
//	                    so Forget drops it once the job has ended
//	ckpt:upload_ms      the newest upload times in milliseconds
//	                    (UploadsKept of them)
//
// A commit also writes the job record, fenced like every write of a
// running attempt (state running, the attempt and its worker): the resume
// token (checkpoint, checkpoint_at) and the ledger's own fields
// ck_manifest, ck_attempt and ck_seq, which order one attempt's commits.
// The keys keep the names they had in queues, so nothing moves in Redis.
//
// # What stays in the kernel
//
// queues.Store.Checkpoint, the token a running job reports on its output
// when it checkpoints by itself, with no upload and no manifest: it is the
// attempt's own state change, two fenced fields of the record (checkpoint,
// checkpoint_at) and no key of this package. The kernel's end and requeue
// scripts count the work since checkpoint_at as lost or done, and the next
// attempt resumes from checkpoint (BALLAST_RESUME_FROM); the worker
// reports it with the rest of an attempt's life (workers.AttemptRecorder).
// A commit here writes the same two fields, for the same readers.
//
// The package is apart from the kernel because no kernel script reads the
// list of manifests or the upload times: the ledger is the checkpoint
// store's index, and its readers need nothing else of the job store.
package checkpoints
