// Package checkpoint moves a job's checkpoint directory between workers
// through object storage (S3 and S3-compatible servers, GCS, Azure Blob, or
// a local path, through gocloud.dev/blob), so that an attempt resumed on
// another machine finds the files its predecessor wrote.
//
// # Layout
//
// A store URL names a bucket and an optional key prefix; under it each job
// has objects of two kinds, and no other:
//
//	jobs/<job id>/chunks/<sha256>-<nonce>
//	jobs/<job id>/manifests/<attempt>-<seq>-<nonce>.json
//
// A chunk is ChunkSize bytes of one file (a file's last chunk is shorter),
// named by the sha256 of those bytes and the nonce of the save that wrote
// it. A manifest is JSON (see Manifest): every file, directory and link of
// the directory (path, mode, size, modification time, sha256, and each
// file's chunk names in order), the job's token, the attempt, the sequence
// number and the upload's figures. Objects are written once and never
// changed; every save writes under names no object had before.
//
// The job record in Redis (the Ledger) holds which manifests are committed:
// a list of their keys, newest first, at most Options.Keep long, beside the
// record's checkpoint token (BALLAST_RESUME_FROM) and the attempt and
// sequence of the newest commit. The store holds nothing else of note: a
// manifest no commit names is garbage, however complete.
//
// # Saving
//
// A checkpoint is saved in three steps, and exists only after the third:
//
//  1. chunks: the saver scans the directory (links are recorded, never
//     followed), reuses the hashes of files unchanged since its base (the
//     checkpoint the attempt restored or last committed), reads the other
//     files, and writes each chunk whose content neither the base nor a
//     recent uncommitted save of the same saver already holds in the
//     store; the rest the manifest names by their existing names;
//  2. manifest: one object, under a key with a fresh nonce;
//  3. commit: Ledger.Commit makes the manifest the job's newest checkpoint
//     and its token the resume point in one fenced step, refusing an
//     attempt that is no longer the job's current one on this worker and a
//     sequence number that does not grow.
//
// A crash or a kill at any point leaves the previous commit in force:
// chunks and manifests without a commit are garbage that Collect deletes
// later. A save that a newer one supersedes, or that runs past
// MaxUploadAge, commits nothing.
//
// # Restoring
//
// Restore rebuilds the newest committed checkpoint in a staging directory
// beside the target, checks every chunk against its name and every file
// against its hash, and swaps it in by renames; a checkpoint that cannot be
// rebuilt whole (a corrupt or missing chunk or manifest) gives way to the
// one committed before it. Files the target already holds with the same
// content are linked, not downloaded. The staging directory's name carries
// the restoring process's pid, so that CleanStaging can remove those of a
// process that died mid-restore (the worker does at start) and leave
// those of another worker sharing the root.
//
// # Retention
//
// Collect deletes a job's objects that no committed manifest names once
// they are older than a grace period. Grace is what keeps an upload in
// flight safe without a lock: a save commits within MaxUploadAge (at most
// half the grace) of the oldest object it relies on, or not at all, and no
// save writes to a key a collection could have listed. Collect's comment
// has the whole argument.
//
// # Use
//
// The worker (package workers, ckstore.go and ckupload.go) uses it when
// config checkpoints.store is set (`ballast worker` opens the store with
// Open and passes it in workers.Options.CheckpointStore):
//
//   - before an attempt starts, Restore puts the newest checkpoint of an
//     earlier attempt (the ledger's Committed keys, through Earlier) that
//     rebuilds whole into the job's checkpoint directory, and its token
//     becomes the attempt's BALLAST_RESUME_FROM; events
//     job.checkpoint_restored and job.checkpoint_fallback say what it got;
//   - a Saver based on the restored manifest uploads each checkpoint the
//     job reports, in its own goroutine, a newer report cancelling the
//     save in flight; each commit is a job.checkpoint event, and a refused
//     one a job.checkpoint_refused event;
//   - Collect runs after commits (at most every few minutes per attempt),
//     and Purge deletes an ended job's objects before its ledger entry is
//     dropped.
//
// `ballast jobs show` reads the ledger and each committed manifest to
// list a job's kept checkpoints.
package checkpoint
