package checkpoint

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"gocloud.dev/blob"
)

// ErrSuperseded ends a save that a newer Save of the same job replaced.
var ErrSuperseded = errors.New("checkpoint: superseded by a newer checkpoint")

// ErrTooSlow ends a save that ran past Options.MaxUploadAge: it commits
// nothing, because the collector may already treat its chunks as garbage.
var ErrTooSlow = errors.New("checkpoint: upload ran past its maximum age; nothing committed")

// Saver uploads and commits the checkpoints of one attempt of one job.
//
// Save calls supersede each other: a Save cancels the one still in flight
// (which returns ErrSuperseded and commits nothing, unless it had reached
// its commit: that one is let finish) and waits for it to stop before it
// scans the directory, so at most one save of the attempt runs and commits
// land in call order with growing sequence numbers. The job's newest
// checkpoint is the one that matters; finishing an older one first would
// only delay it.
type Saver struct {
	store   *Store
	ledger  Ledger
	jobID   string
	attempt int
	opts    Options

	mu  sync.Mutex
	seq int64
	cur *flight
	// base is the newest committed manifest this saver knows (restored
	// or saved): its chunks are in the store and stay there until a
	// commit of this saver replaces it in the ledger, so a save need not
	// write them again, and its files need no hashing if unchanged.
	base *Manifest
	// written holds chunks this saver wrote that no commit names yet (a
	// superseded or too slow save's), by sum, with when each was written:
	// a later save may name them only while that is recent (see save).
	written map[string]known

	// beforeManifest and beforeCommit, when set (by tests), run once the
	// chunks are written and before the manifest is, and once the
	// manifest is written and before the commit.
	beforeManifest func(ctx context.Context)
	beforeCommit   func(ctx context.Context)
}

type flight struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// Saved describes a committed checkpoint.
type Saved struct {
	Key      string
	Manifest *Manifest
	// HashedFiles is how many files were read; the others were
	// unchanged since base and kept their hashes.
	HashedFiles int
	// Duration is the whole save: scan, chunks, manifest and commit.
	Duration time.Duration
}

// NewSaver returns the saver of jobID's attempt. base is the checkpoint the
// attempt restored (Restored.Manifest), nil for a fresh start.
func NewSaver(store *Store, ledger Ledger, jobID string, attempt int, base *Manifest, opts Options) (*Saver, error) {
	if _, err := jobPrefix(jobID); err != nil {
		return nil, err
	}
	if attempt < 1 {
		return nil, fmt.Errorf("checkpoint: attempt %d, want 1 or more", attempt)
	}
	s := &Saver{store: store, ledger: ledger, jobID: jobID, attempt: attempt, opts: opts.withDefaults(),
		base: base, written: map[string]known{}}
	if base != nil && base.Attempt == attempt {
		s.seq = base.Seq
	}
	return s, nil
}

// Save uploads dir as the checkpoint token names and commits it. It returns
// once the checkpoint is committed (the token is then the job's
// BALLAST_RESUME_FROM) or nothing was: ErrSuperseded, ErrTooSlow, the
// context's error, or the ledger's refusal (the attempt moved on).
func (s *Saver) Save(parent context.Context, dir, token string) (*Saved, error) {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	me := &flight{cancel: cancel, done: make(chan struct{})}
	defer close(me.done)
	s.mu.Lock()
	prev := s.cur
	s.cur = me
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	if prev != nil {
		prev.cancel(ErrSuperseded)
		<-prev.done
	}
	defer func() {
		s.mu.Lock()
		if s.cur == me {
			s.cur = nil
		}
		s.mu.Unlock()
	}()
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	saved, err := s.save(ctx, parent, dir, token, seq)
	if err != nil && ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	return saved, err
}

// Close cancels the save in flight, if any, and waits for it.
func (s *Saver) Close() {
	s.mu.Lock()
	cur := s.cur
	s.mu.Unlock()
	if cur != nil {
		cur.cancel(ErrSuperseded)
		<-cur.done
	}
}

// Base is the newest checkpoint the saver knows committed.
func (s *Saver) Base() *Manifest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.base
}

// save runs one save. ctx ends when a newer save supersedes this one;
// parent is the caller's: the commit runs under parent alone, so that once
// a save reaches its commit, a newer one waits for the outcome rather than
// leave it unknown.
func (s *Saver) save(ctx, parent context.Context, dir, token string, seq int64) (*Saved, error) {
	start := s.opts.Now()
	entries, err := scan(dir)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	base := s.base
	skip := map[string]known{}
	for sum, k := range s.written {
		// A chunk of an uncommitted save ties this save's deadline to
		// when it was written (see below): name it only if that leaves
		// this save at least half of MaxUploadAge, else write it again
		// under this save's nonce. So a save that gave up for being too
		// slow never makes the next one give up too.
		if start.Sub(k.at) >= s.opts.MaxUploadAge/2 {
			delete(s.written, sum)
			continue
		}
		skip[sum] = k
	}
	s.mu.Unlock()
	if base != nil {
		for _, e := range base.Entries {
			for _, name := range e.Chunks {
				skip[chunkSum(name)] = known{name: name} // committed: safe whatever its age
			}
		}
	}
	hashed := reuseHashes(entries, base, s.opts.ChunkSize)
	up, err := s.uploadChunks(ctx, dir, entries, skip, randHex(8))
	s.noteWritten(up.written)
	if err != nil {
		return nil, err
	}
	// oldest bounds how stale a chunk this manifest names may be: the
	// collector spares anything younger than Grace, and the commit below
	// must land before oldest+MaxUploadAge (at most Grace/2).
	oldest := start
	for _, at := range up.reusedWritten {
		if at.Before(oldest) {
			oldest = at
		}
	}
	deadline := oldest.Add(s.opts.MaxUploadAge)
	if s.beforeManifest != nil {
		s.beforeManifest(ctx)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	m := &Manifest{Version: manifestVersion, JobID: s.jobID, Attempt: s.attempt, Seq: seq, Token: token,
		Created: start.UTC(), ChunkSize: s.opts.ChunkSize, Entries: entries,
		Uploaded: up.bytes, UploadedChunks: up.chunks, UploadMillis: up.took.Milliseconds()}
	for _, e := range entries {
		m.Size += e.Size
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if !s.opts.Now().Before(deadline) {
		return nil, ErrTooSlow
	}
	key := manifestKey(s.jobID, s.attempt, seq, randHex(4))
	if err := s.store.b.WriteAll(ctx, key, data, &blob.WriterOptions{ContentType: "application/json"}); err != nil {
		return nil, fmt.Errorf("checkpoint: write manifest %s: %w", key, err)
	}
	if s.beforeCommit != nil {
		s.beforeCommit(ctx)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if !s.opts.Now().Before(deadline) {
		return nil, ErrTooSlow
	}
	cctx, cancel := context.WithTimeout(parent, deadline.Sub(s.opts.Now()))
	defer cancel()
	if err := s.ledger.Commit(cctx, s.jobID, s.attempt, seq, key, token, s.opts.Keep); err != nil {
		// The commit may have landed all the same (a reply lost, a
		// deadline hit in flight), and then base may have left the
		// ledger while the next save would still name its chunks
		// without a commit to keep them. Build the next one from
		// scratch; a refused attempt saves no more anyway.
		s.mu.Lock()
		s.base = nil
		s.mu.Unlock()
		return nil, fmt.Errorf("checkpoint: commit %s: %w", key, err)
	}
	s.mu.Lock()
	s.base = m
	s.written = map[string]known{}
	s.mu.Unlock()
	return &Saved{Key: key, Manifest: m, HashedFiles: hashed, Duration: s.opts.Now().Sub(start)}, nil
}

// noteWritten remembers chunks written by a save that may not commit.
func (s *Saver) noteWritten(w map[string]known) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sum, k := range w {
		s.written[sum] = k
	}
}

// reuseHashes fills in the hashes of files unchanged since base (same size,
// mode and modification time, and modified well before base was scanned,
// so a write in the same clock tick as that scan cannot hide) and returns
// how many files are left to hash. Restore sets files' modification times
// to the manifest's, so a restored, untouched file counts as unchanged.
func reuseHashes(entries []Entry, base *Manifest, chunkSize int64) int {
	prev := map[string]Entry{}
	if base != nil && base.ChunkSize == chunkSize {
		settled := base.Created.Add(-2 * time.Second).UnixNano()
		for _, e := range base.Entries {
			if e.Kind == KindFile && e.ModTime < settled {
				prev[e.Path] = e
			}
		}
	}
	n := 0
	for i := range entries {
		e := &entries[i]
		if e.Kind != KindFile {
			continue
		}
		if p, ok := prev[e.Path]; ok && p.Size == e.Size && p.ModTime == e.ModTime && p.Mode == e.Mode {
			e.SHA256, e.Chunks = p.SHA256, p.Chunks
			continue
		}
		n++
	}
	return n
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
