package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers/checkpoint"
)

// keptCheckpoint is one checkpoint a job keeps in the checkpoint store,
// as `jobs show` lists it.
type keptCheckpoint struct {
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

// jobCheckpoints lists the checkpoints the job keeps, newest first, read
// from the ledger in Redis and each manifest from the store (with this
// machine's credentials for it). Nil when the job has none.
func jobCheckpoints(ctx context.Context, cfg config.Config, store *queues.Store, id string) ([]keptCheckpoint, error) {
	keys, err := store.CheckpointLedger("").Committed(ctx, id)
	if err != nil || len(keys) == 0 {
		return nil, err
	}
	out := make([]keptCheckpoint, len(keys))
	for i, k := range keys {
		out[i].Manifest = k
		out[i].Attempt, _ = checkpoint.KeyAttempt(k)
	}
	if !cfg.Checkpoints.Enabled() {
		for i := range out {
			out[i].Error = "checkpoints.store is not set in this config"
		}
		return out, nil
	}
	ctx, cancel := context.WithTimeout(ctx, historyTimeout)
	defer cancel()
	st, err := checkpoint.Open(ctx, cfg.Checkpoints.Store)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	for i := range out {
		m, err := st.ReadManifest(ctx, id, out[i].Manifest)
		if err != nil {
			out[i].Error = err.Error()
			continue
		}
		c := &out[i]
		c.Token, c.Attempt, c.Created, c.Size, c.Uploaded, c.UploadMillis = m.Token, m.Attempt, m.Created, m.Size, m.Uploaded, m.UploadMillis
		for _, e := range m.Entries {
			if e.Kind == checkpoint.KindFile {
				c.Files++
			}
		}
	}
	return out, nil
}

// checkpointRows are the table rows of kept checkpoints.
func checkpointRows(cks []keptCheckpoint, now time.Time) [][]any {
	rows := make([][]any, 0, len(cks))
	for i, c := range cks {
		if c.Error != "" {
			rows = append(rows, []any{i + 1, "-", "-", "-", "-", "-", "-", "unreadable: " + c.Error})
			continue
		}
		upload := (time.Duration(c.UploadMillis) * time.Millisecond).String()
		rows = append(rows, []any{i + 1, ago(c.Created, now), c.Token, c.Attempt, fmt.Sprintf("%s (%d files)", jobs.ByteSize(c.Size), c.Files),
			jobs.ByteSize(c.Uploaded), upload, c.Manifest})
	}
	return rows
}
