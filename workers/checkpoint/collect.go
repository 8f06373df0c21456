package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"gocloud.dev/blob"
)

// Collected says what Collect deleted.
type Collected struct {
	Manifests int
	Chunks    int
	Bytes     int64
	// Committed is how many manifests the ledger names.
	Committed int
	// Unreadable counts committed manifests that are gone or corrupt
	// (Restore falls back over them); their chunks cannot be known.
	Unreadable int
}

// Collect deletes jobID's manifests that no commit names and its chunks
// that no committed manifest names, each only if older than grace at now
// (the ledger keeps the last Options.Keep commits, so this keeps as many
// checkpoints). Deletion needs only age and the ledger, never a lock with
// the saver, and still cannot take a chunk or manifest an upload in flight
// will commit. The argument:
//
//  1. No save writes to a key that ever held an object: a save names new
//     chunks and its manifest with a nonce of its own (see Store). So an
//     object Collect lists is the very write a save made, and its time is
//     when that save wrote it, not an older copy's that a save rewrote
//     after the listing (which Collect would then delete).
//  2. Collect lists the objects (with their write times) first and reads
//     the ledger after, so a commit that happened before the listing is in
//     the list it reads.
//  3. A save commits before oldest+MaxUploadAge or not at all (ErrTooSlow,
//     and the ledger call's deadline), where oldest is its start or the
//     write time of the oldest uncommitted chunk it relies on, and
//     MaxUploadAge <= Grace/2. So an object of a save that will commit, old
//     enough to be deleted (written before now-grace), was committed before
//     now-grace+MaxUploadAge < now, i.e. before the listing: the ledger read
//     names its manifest.
//  4. The other chunks a manifest names are the saver's base's, which the
//     ledger keeps until a commit of the same saver replaces it, and that
//     commit names them itself: only the job's current attempt commits, and
//     its saves run one at a time. A commit whose outcome the saver does
//     not know ends its trust in base (the next save writes every chunk).
//
// Restores are safe too: they read committed manifests, and only the
// attempt being restored could commit a newer one. Clock skew between the
// store, the saver and the collector eats into the margin of (3), as would
// a commit that reaches Redis long after the saver gave up on it, so grace
// should be far above the longest upload, any skew and any such delay; the
// default is a day.
// A committed manifest that cannot be read makes the chunks it named
// unknowable; Collect then deletes no chunk (a transient read error) or
// counts it as Unreadable (gone or corrupt: nothing can restore it).
func Collect(ctx context.Context, store *Store, ledger Ledger, jobID string, grace time.Duration, now time.Time) (Collected, error) {
	var out Collected
	prefix, err := jobPrefix(jobID)
	if err != nil {
		return out, err
	}
	cutoff := now.Add(-grace)
	type object struct {
		key  string
		size int64
	}
	var oldManifests, oldChunks []object
	listed, err := store.list(ctx, prefix)
	if err != nil {
		return out, err
	}
	for _, o := range listed {
		if o.IsDir || !o.ModTime.Before(cutoff) {
			continue
		}
		switch {
		case strings.HasPrefix(o.Key, prefix+"manifests/"):
			oldManifests = append(oldManifests, object{o.Key, o.Size})
		case strings.HasPrefix(o.Key, prefix+"chunks/"):
			oldChunks = append(oldChunks, object{o.Key, o.Size})
		}
	}
	committed, err := ledger.Committed(ctx, jobID)
	if err != nil {
		return out, fmt.Errorf("checkpoint: list committed checkpoints: %w", err)
	}
	out.Committed = len(committed)
	keep := map[string]bool{}
	for _, k := range committed {
		keep[k] = true
		m, err := store.ReadManifest(ctx, jobID, k)
		if err != nil {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			if !gone(err) {
				return out, fmt.Errorf("checkpoint: %w (no chunk deleted)", err)
			}
			out.Unreadable++
			continue
		}
		for _, e := range m.Entries {
			for _, name := range e.Chunks {
				keep[chunkKey(jobID, name)] = true
			}
		}
	}
	for _, group := range [][]object{oldManifests, oldChunks} {
		for _, o := range group {
			if keep[o.key] {
				continue
			}
			if err := store.b.Delete(ctx, o.key); err != nil && !notFound(err) {
				return out, fmt.Errorf("checkpoint: delete %s: %w", o.key, err)
			}
			if strings.Contains(o.key, "/manifests/") {
				out.Manifests++
			} else {
				out.Chunks++
			}
			out.Bytes += o.size
		}
	}
	return out, nil
}

// gone reports whether a manifest read failed for good: the object is
// missing or is not a valid manifest (as opposed to a store error).
func gone(err error) bool { return notFound(err) || errors.Is(err, ErrCorruptManifest) }

// Purge deletes every object of jobID: for a job whose record is gone, so
// that no attempt will restore anything.
func Purge(ctx context.Context, store *Store, jobID string) (int, error) {
	prefix, err := jobPrefix(jobID)
	if err != nil {
		return 0, err
	}
	listed, err := store.list(ctx, prefix)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range listed {
		if err := store.b.Delete(ctx, o.Key); err != nil && !notFound(err) {
			return n, fmt.Errorf("checkpoint: delete %s: %w", o.Key, err)
		}
		n++
	}
	return n, nil
}

// list lists the objects under prefix. A file store's listing fails when
// an object goes while it looks at it (a write's temporary file renamed,
// another collection's delete); the listing then starts again.
func (s *Store) list(ctx context.Context, prefix string) ([]*blob.ListObject, error) {
	for try := 1; ; try++ {
		var out []*blob.ListObject
		it := s.b.List(&blob.ListOptions{Prefix: prefix})
		for {
			o, err := it.Next(ctx)
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			if notFound(err) && try < 10 && ctx.Err() == nil {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("checkpoint: list %s: %w", prefix, err)
			}
			out = append(out, o)
		}
	}
}
