package api

import (
	"context"
	"net/http"
	"time"

	"github.com/ballastdev/ballast/workers/checkpoint"
)

// JobCheckpoints is the body of GET /api/v1/jobs/{id}/checkpoints.
type JobCheckpoints struct {
	Job string `json:"job"`
	// Checkpoints are the ones the job keeps in the checkpoint store,
	// newest first: empty when it keeps none (it never committed one, or
	// it ended and they were deleted).
	Checkpoints []checkpoint.Kept `json:"checkpoints"`
}

// manifestsTimeout bounds the manifest reads of one request: a store that
// hangs costs the page its sizes, not its answer.
const manifestsTimeout = 3 * time.Second

// checkpoints serves GET /api/v1/jobs/{id}/checkpoints, the list that
// `ballast jobs show` prints: the ledger in Redis names them, and each
// manifest, read from the store with the controller's credentials, gives
// when it was made, its size and what its upload wrote and took.
func (h *handler) checkpoints(w http.ResponseWriter, r *http.Request) {
	j, err := h.jobs.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		writeErr(w, err)
		return
	}
	keys, err := h.committed.Committed(r.Context(), j.ID)
	if err != nil {
		writeErr(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), manifestsTimeout)
	defer cancel()
	kept := checkpoint.DescribeKept(ctx, h.ckStore, j.ID, keys, "the controller has no checkpoint store (config checkpoints.store)")
	writeJSON(w, http.StatusOK, JobCheckpoints{Job: j.ID, Checkpoints: kept})
}
