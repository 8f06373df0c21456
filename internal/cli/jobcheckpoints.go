package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/checkpoints"
	"github.com/ballastdev/ballast/workers/checkpoint"
)

// keptCheckpoint is one checkpoint a job keeps in the checkpoint store,
// as `jobs show` lists it.
type keptCheckpoint = checkpoint.Kept

// jobCheckpoints lists the checkpoints the job keeps, newest first, read
// from the ledger in Redis and each manifest from the store (with this
// machine's credentials for it). Nil when the job has none.
func jobCheckpoints(ctx context.Context, cfg config.Config, store *queues.Store, id string) ([]keptCheckpoint, error) {
	keys, err := checkpoints.New(store).Committed(ctx, id)
	if err != nil || len(keys) == 0 {
		return nil, err
	}
	if !cfg.Checkpoints.Enabled() {
		return checkpoint.DescribeKept(ctx, nil, id, keys, "checkpoints.store is not set in this config"), nil
	}
	ctx, cancel := context.WithTimeout(ctx, historyTimeout)
	defer cancel()
	st, err := checkpoint.Open(ctx, cfg.Checkpoints.Store)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return checkpoint.DescribeKept(ctx, st, id, keys, ""), nil
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
