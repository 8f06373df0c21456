package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"
)

// Entry kinds in a manifest.
const (
	KindFile    = "file"
	KindDir     = "dir"
	KindSymlink = "symlink"
)

// Manifest describes one checkpoint: every entry of the job's checkpoint
// directory, and how to rebuild each file from chunks. It is written once
// under a key no other checkpoint uses and never changed: a reader that
// finds it finds all of it.
type Manifest struct {
	Version int    `json:"version"`
	JobID   string `json:"job_id"`
	Attempt int    `json:"attempt"`
	Seq     int64  `json:"seq"`
	// Token is what the job printed (or wrote to .ballast-checkpoint).
	Token string `json:"token"`
	// Created is when the save began scanning the directory; a file
	// modified after it is hashed again next time (see Saver).
	Created   time.Time `json:"created"`
	ChunkSize int64     `json:"chunk_size"`
	Entries   []Entry   `json:"entries"`
	// Size is the sum of the files' sizes.
	Size int64 `json:"size"`
	// Uploaded and UploadedChunks count what this save wrote (chunks
	// already in the store are not written again); UploadMillis is how
	// long the chunks took, manifest excluded.
	Uploaded       int64 `json:"uploaded"`
	UploadedChunks int   `json:"uploaded_chunks"`
	UploadMillis   int64 `json:"upload_ms"`
}

// Entry is one file, directory or symbolic link, by its slash-separated path
// relative to the checkpoint directory.
type Entry struct {
	Path string      `json:"path"`
	Kind string      `json:"kind"`
	Mode fs.FileMode `json:"mode"`
	// Files only.
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	// Chunks names the file's chunks in order: each is the chunk's
	// sha256, a dash and the nonce of the save that wrote it (see Store).
	Chunks  []string `json:"chunks,omitempty"`
	ModTime int64    `json:"mtime_ns,omitempty"`
	// Symbolic links only: the target, never followed.
	Link string `json:"link,omitempty"`
}

const manifestVersion = 1

// check refuses a manifest that could write outside the directory or that
// does not describe its files consistently: manifests come from a store
// other machines write to.
func (m *Manifest) check(jobID string) error {
	if m.Version != manifestVersion {
		return fmt.Errorf("manifest version %d, want %d", m.Version, manifestVersion)
	}
	if m.JobID != jobID {
		return fmt.Errorf("manifest is job %q's, want %q", m.JobID, jobID)
	}
	if m.ChunkSize <= 0 {
		return fmt.Errorf("manifest chunk size %d", m.ChunkSize)
	}
	seen := map[string]bool{}
	for _, e := range m.Entries {
		if !filepath.IsLocal(filepath.FromSlash(e.Path)) || strings.Contains(e.Path, `\`) {
			return fmt.Errorf("manifest entry %q is not a path inside the directory", e.Path)
		}
		if seen[e.Path] {
			return fmt.Errorf("manifest entry %q appears twice", e.Path)
		}
		seen[e.Path] = true
		switch e.Kind {
		case KindDir, KindSymlink:
		case KindFile:
			want := (e.Size + m.ChunkSize - 1) / m.ChunkSize
			if e.Size < 0 || int64(len(e.Chunks)) != want || !isSum(e.SHA256) {
				return fmt.Errorf("manifest entry %q: %d chunks, sha256 %q for %d bytes", e.Path, len(e.Chunks), e.SHA256, e.Size)
			}
			for _, c := range e.Chunks {
				if !isChunkName(c) {
					return fmt.Errorf("manifest entry %q: chunk name %q is not a sha256 and a nonce", e.Path, c)
				}
			}
		default:
			return fmt.Errorf("manifest entry %q: unknown kind %q", e.Path, e.Kind)
		}
	}
	return nil
}

func isSum(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// isChunkName reports whether s is a sha256, a dash and a nonce of 1 to
// 32 hex digits.
func isChunkName(s string) bool {
	if len(s) < 66 || len(s) > 97 || s[64] != '-' || !isSum(s[:64]) {
		return false
	}
	for _, c := range s[65:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// chunkSet is the set of chunk names the manifest refers to.
func (m *Manifest) chunkSet() map[string]bool {
	set := map[string]bool{}
	for _, e := range m.Entries {
		for _, c := range e.Chunks {
			set[c] = true
		}
	}
	return set
}

// ErrCorruptManifest marks a manifest that does not decode or describes
// something no save writes.
var ErrCorruptManifest = errors.New("corrupt manifest")

// ReadManifest reads and checks the manifest at key for jobID.
func (s *Store) ReadManifest(ctx context.Context, jobID, key string) (*Manifest, error) {
	p, err := jobPrefix(jobID)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(key, p+"manifests/") {
		return nil, fmt.Errorf("manifest key %q is not job %q's", key, jobID)
	}
	data, err := s.b.ReadAll(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", key, err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("manifest %s: %w: %w", key, ErrCorruptManifest, err)
	}
	if err := m.check(jobID); err != nil {
		return nil, fmt.Errorf("manifest %s: %w: %w", key, ErrCorruptManifest, err)
	}
	return &m, nil
}
