package api

import (
	"context"
	"net/http"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
)

// JobEvents reads one job's stored events, oldest first (eventbus.History
// bound to the installation's stream).
type JobEvents func(ctx context.Context, jobID string) ([]events.Event, error)

// eventsTimeout bounds the event read of one attempts request: the
// reasons are worth a short wait, not a hung page.
const eventsTimeout = 3 * time.Second

// attempts serves GET /api/v1/jobs/{id}/attempts: every attempt with why
// it began and ended, where it ran and what it cost, and the runs apart
// from the deliveries.
func (h *handler) attempts(w http.ResponseWriter, r *http.Request) {
	j, err := h.jobs.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		writeErr(w, err)
		return
	}
	attempts, complete, err := h.ledger.JobUsage(r.Context(), j)
	if err != nil {
		writeErr(w, err)
		return
	}
	var evs []events.Event
	note := "reasons from the event stream"
	if h.jobEvents == nil {
		note = "no event stream: reasons unknown"
	} else {
		ctx, cancel := context.WithTimeout(r.Context(), eventsTimeout)
		evs, err = h.jobEvents(ctx, j.ID)
		cancel()
		if err != nil {
			note = "event stream unreadable, reasons unknown: " + err.Error()
		}
	}
	if !complete {
		note += "; usage read stopped early, older attempts may lack their pool and worker"
	}
	prices := map[string]float64{}
	if h.live != nil {
		for _, p := range h.live.Source.Pools {
			prices[p.Name] = p.PricePerSlotHour
		}
	}
	v := insight.BuildAttempts(j, attempts, evs, prices, time.Now())
	v.Reasons = note
	writeJSON(w, http.StatusOK, v)
}
