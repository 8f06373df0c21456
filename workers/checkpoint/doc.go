// Package checkpoint moves a job's checkpoint directory between workers
// through object storage (S3 and S3-compatible servers, GCS, Azure Blob, or
// a local path, through gocloud.dev/blob), so that an attempt resumed on
// another machine finds the files its predecessor wrote.
//
// A checkpoint is saved in three steps, and exists only after the third:
//
//  1. chunks: every file is cut into fixed-size chunks named by their
//     sha256; only chunks the store lacks are written (a saver knows those
//     of the last committed checkpoint, and rehashes only files whose size,
//     mode or modification time changed);
//  2. manifest: one immutable object listing every file (path, mode, size,
//     sha256, chunks), directory and symbolic link, with the token, the
//     attempt, a sequence number and the upload's figures;
//  3. commit: the Ledger (the job record in Redis) makes the manifest the
//     job's newest checkpoint and its token the resume point, refusing an
//     attempt that moved on or a sequence that does not grow.
//
// A crash at any point leaves the previous commit in force: chunks and
// manifests without a commit are garbage that Collect deletes later.
// Restore rebuilds the newest committed checkpoint beside the target,
// checks every hash, and swaps it in; a checkpoint that cannot be rebuilt
// whole gives way to the one before it.
//
// The worker's side (not wired yet):
//
//	store, _ := checkpoint.Open(ctx, cfg.Checkpoints.Store)
//	ledger := queuesStore.CheckpointLedger(workerID)
//	// before the job starts:
//	r, err := checkpoint.RestoreLatest(ctx, store, ledger, job.ID, ckDir, checkpoint.RestoreOptions{OnFallback: ...})
//	resumeFrom := ""
//	if r.Manifest != nil { resumeFrom = r.Manifest.Token }
//	saver, _ := checkpoint.NewSaver(store, ledger, job.ID, job.Attempt, r.Manifest, opts)
//	// each time the job reports a checkpoint (in its own goroutine):
//	saved, err := saver.Save(ctx, ckDir, token)
//	// from time to time, and after commits:
//	checkpoint.Collect(ctx, store, ledger, job.ID, opts.Grace, time.Now())
package checkpoint
