package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
)

// ErrNoCheckpoint says no committed checkpoint could be restored.
var ErrNoCheckpoint = errors.New("checkpoint: no committed checkpoint could be restored")

// Fallback is a committed checkpoint Restore passed over, and why.
type Fallback struct {
	Key string
	Err error
}

// Restored says what Restore put in place.
type Restored struct {
	// Key and Manifest are the checkpoint restored: nil when the job has
	// none. The next attempt's BALLAST_RESUME_FROM is Manifest.Token,
	// which is not the record's newest token after a fallback.
	Key      string
	Manifest *Manifest
	// Fallbacks lists the newer checkpoints that could not be restored.
	Fallbacks []Fallback
	// Downloaded and DownloadedChunks count what came from the store;
	// ReusedFiles counts files the directory already held.
	Downloaded       int64
	DownloadedChunks int
	ReusedFiles      int
	Duration         time.Duration
}

// RestoreOptions tune Restore.
type RestoreOptions struct {
	// Concurrency bounds the chunks downloading at once (default 8).
	Concurrency int
	// OnFallback is told each checkpoint passed over, as it happens.
	OnFallback func(Fallback)
	// Now is the clock Restored.Duration is measured on (time.Now unless
	// set), as Options.Now is for saves.
	Now func() time.Time
}

// RestoreLatest restores the newest committed checkpoint of jobID the
// ledger lists into target (see Restore).
func RestoreLatest(ctx context.Context, store *Store, ledger Ledger, jobID, target string, opts RestoreOptions) (*Restored, error) {
	keys, err := ledger.Committed(ctx, jobID)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: list committed checkpoints: %w", err)
	}
	return Restore(ctx, store, jobID, keys, target, opts)
}

// Restore makes target hold the newest of the committed checkpoints keys
// (newest first) that it can rebuild whole. Each is rebuilt in a staging
// directory beside target, every chunk checked against its name and every
// file against its hash, and only then swapped in by renames: target is
// never a mix of two checkpoints, and a failure leaves it as it was. A
// corrupt or missing chunk or manifest moves on to the next older
// checkpoint (OnFallback, Restored.Fallbacks); when none is left the error
// is ErrNoCheckpoint. A file target already holds with the same content (the
// same machine ran the last attempt) is linked into place, not downloaded.
// With no keys, target is left alone and Restored.Manifest is nil.
//
// Restored files belong to the calling process: a worker that runs jobs as
// another user must hand the directory over.
func Restore(ctx context.Context, store *Store, jobID string, keys []string, target string, opts RestoreOptions) (*Restored, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	start := opts.Now()
	if opts.Concurrency < 1 {
		opts.Concurrency = DefaultConcurrency
	}
	res := &Restored{}
	for _, key := range keys {
		r := restorer{store: store, jobID: jobID, target: target, conc: opts.Concurrency}
		m, err := r.restore(ctx, key)
		res.Downloaded += r.bytes
		res.DownloadedChunks += r.chunks
		if err == nil {
			res.Key, res.Manifest, res.ReusedFiles = key, m, r.reused
			res.Duration = opts.Now().Sub(start)
			return res, nil
		}
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		fb := Fallback{Key: key, Err: err}
		res.Fallbacks = append(res.Fallbacks, fb)
		if opts.OnFallback != nil {
			opts.OnFallback(fb)
		}
	}
	res.Duration = opts.Now().Sub(start)
	if len(keys) == 0 {
		return res, nil
	}
	return res, fmt.Errorf("%w (%d tried; newest: %v)", ErrNoCheckpoint, len(keys), res.Fallbacks[0].Err)
}

type restorer struct {
	store  *Store
	jobID  string
	target string
	conc   int

	mu     sync.Mutex
	bytes  int64
	chunks int
	reused int
}

func (r *restorer) restore(ctx context.Context, key string) (*Manifest, error) {
	m, err := r.store.ReadManifest(ctx, r.jobID, key)
	if err != nil {
		return nil, err
	}
	parent := filepath.Dir(r.target)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, err
	}
	stage, err := os.MkdirTemp(parent, stagePrefix(filepath.Base(r.target), os.Getpid()))
	if err != nil {
		return nil, err
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(stage)
		}
	}()
	if err := r.build(ctx, m, stage); err != nil {
		return nil, err
	}
	if err := swapIn(stage, r.target); err != nil {
		return nil, err
	}
	done = true
	return m, nil
}

// build lays m out in stage.
func (r *restorer) build(ctx context.Context, m *Manifest, stage string) error {
	type piece struct {
		path string
		name string // the chunk's (see chunkName)
		off  int64
		n    int64
	}
	var pieces []piece
	var fetched []Entry
	for _, e := range m.Entries {
		dst := filepath.Join(stage, filepath.FromSlash(e.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		switch e.Kind {
		case KindDir:
			if err := os.MkdirAll(dst, 0o700); err != nil {
				return err
			}
		case KindSymlink:
			if err := os.Symlink(e.Link, dst); err != nil {
				return err
			}
		case KindFile:
			if r.reuse(filepath.Join(r.target, filepath.FromSlash(e.Path)), dst, e) {
				continue
			}
			f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
			if err != nil {
				return err
			}
			err = f.Truncate(e.Size)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			for i, c := range e.Chunks {
				off := int64(i) * m.ChunkSize
				pieces = append(pieces, piece{path: dst, name: c, off: off, n: min(m.ChunkSize, e.Size-off)})
			}
			fetched = append(fetched, e)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.conc)
	for _, p := range pieces {
		g.Go(func() error {
			data, err := r.store.b.ReadAll(gctx, chunkKey(r.jobID, p.name))
			if err != nil {
				return fmt.Errorf("chunk %s: %w", p.name, err)
			}
			got := sha256.Sum256(data)
			if hex.EncodeToString(got[:]) != chunkSum(p.name) || int64(len(data)) != p.n {
				return fmt.Errorf("chunk %s is corrupt (%d bytes, want %d)", p.name, len(data), p.n)
			}
			f, err := os.OpenFile(p.path, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			_, err = f.WriteAt(data, p.off)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			r.mu.Lock()
			r.bytes += int64(len(data))
			r.chunks++
			r.mu.Unlock()
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	// The chunks were checked; the files are checked whole too, which
	// catches a manifest whose chunk list does not make its file.
	for _, e := range fetched {
		sum, err := fileSum(filepath.Join(stage, filepath.FromSlash(e.Path)))
		if err != nil {
			return err
		}
		if sum != e.SHA256 {
			return fmt.Errorf("file %s: sha256 %s, manifest says %s", e.Path, sum, e.SHA256)
		}
	}
	// Modes and times last, directories deepest first: a read-only
	// directory could not have been filled.
	for i := len(m.Entries) - 1; i >= 0; i-- {
		e := m.Entries[i]
		p := filepath.Join(stage, filepath.FromSlash(e.Path))
		switch e.Kind {
		case KindFile:
			if err := os.Chmod(p, e.Mode.Perm()); err != nil {
				return err
			}
			t := time.Unix(0, e.ModTime)
			if err := os.Chtimes(p, t, t); err != nil {
				return err
			}
		case KindDir:
			if err := os.Chmod(p, e.Mode.Perm()|0o700); err != nil {
				return err
			}
		}
	}
	return nil
}

// reuse links (or copies) into dst the file at src if it holds e's content,
// and reports whether it did. src is opened without following links: a job
// may have left one there pointing anywhere.
func (r *restorer) reuse(src, dst string, e Entry) bool {
	st, err := os.Lstat(src)
	if err != nil || !st.Mode().IsRegular() || st.Size() != e.Size {
		return false
	}
	if sum, err := fileSum(src); err != nil || sum != e.SHA256 {
		return false
	}
	if os.Link(src, dst) != nil && copyFile(src, dst) != nil {
		os.Remove(dst)
		return false
	}
	r.mu.Lock()
	r.reused++
	r.mu.Unlock()
	return true
}

func fileSum(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func copyFile(src, dst string) error {
	in, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// swapIn puts stage at target by renames. A crash between the two renames
// leaves target absent and its old content beside it: the next restore
// rebuilds target from the store (the files left beside it are not reused).
func swapIn(stage, target string) error {
	old := ""
	if _, err := os.Lstat(target); err == nil {
		old = stage + ".old"
		if err := os.Rename(target, old); err != nil {
			return err
		}
	}
	if err := os.Rename(stage, target); err != nil {
		if old != "" {
			_ = os.Rename(old, target)
		}
		return err
	}
	if old != "" {
		_ = os.RemoveAll(old)
	}
	return nil
}
