package checkpoint

import (
	"context"
	"time"
)

// Kept describes one checkpoint a job keeps, as `ballast jobs show` and the
// API's job checkpoints endpoint list it: what the ledger names, and what
// its manifest says of it.
type Kept struct {
	Manifest string    `json:"manifest"`
	Token    string    `json:"token,omitempty"`
	Attempt  int       `json:"attempt,omitempty"`
	Created  time.Time `json:"created,omitzero"`
	Files    int       `json:"files,omitempty"`
	Size     int64     `json:"size_bytes,omitempty"`
	// Uploaded is what this checkpoint's upload wrote: chunks the store
	// already held (unchanged files) cost nothing.
	Uploaded     int64 `json:"uploaded_bytes,omitempty"`
	UploadMillis int64 `json:"upload_ms,omitempty"`
	// Error says why the manifest could not be read.
	Error string `json:"error,omitempty"`
}

// DescribeKept describes the committed manifests keys of jobID (newest
// first, as Ledger.Committed lists them), reading each manifest from
// store. A nil store leaves each with its key and attempt, and unread
// (why there is no store) as its Error; a manifest that cannot be read keeps its error too, and the
// others are still read.
func DescribeKept(ctx context.Context, store *Store, jobID string, keys []string, unread string) []Kept {
	out := make([]Kept, len(keys))
	for i, k := range keys {
		c := &out[i]
		c.Manifest = k
		c.Attempt, _ = KeyAttempt(k)
		if store == nil {
			c.Error = unread
			continue
		}
		m, err := store.ReadManifest(ctx, jobID, k)
		if err != nil {
			c.Error = err.Error()
			continue
		}
		c.Token, c.Attempt, c.Created, c.Size, c.Uploaded, c.UploadMillis = m.Token, m.Attempt, m.Created, m.Size, m.Uploaded, m.UploadMillis
		for _, e := range m.Entries {
			if e.Kind == KindFile {
				c.Files++
			}
		}
	}
	return out
}
