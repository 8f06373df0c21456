package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/pipeline"
	"github.com/ballastdev/ballast/orchestrator/model/sweep"
	"github.com/ballastdev/ballast/queues/flows"
	"github.com/ballastdev/ballast/workers/checkpoint"
)

// Flows are the pipeline and sweep runners the API exposes; a nil field
// leaves its write endpoints out (reads need only the store).
type Flows struct {
	Sweeps    *controller.Sweeps
	Pipelines *controller.Pipelines
	// Metrics, when set, is served at GET /metrics behind the API token
	// (Prometheus sends it with bearer_token).
	Metrics http.Handler
	// JobEvents, when set, gives a job's attempts their reasons.
	JobEvents JobEvents
	// Checkpoints, when set, is the checkpoint store whose manifests
	// describe a job's kept checkpoints (GET .../checkpoints); the caller
	// owns it.
	Checkpoints *checkpoint.Store
}

// mountFlows adds the pipeline and sweep endpoints to mux.
func (h *handler) mountFlows(mux *router, f Flows, token string) {
	if f.Sweeps != nil {
		mux.Handle("POST "+intake.SweepSubmitPath, intake.SweepHTTPHandler(f.Sweeps, token))
	}
	if f.Metrics != nil {
		mux.HandleFunc("GET /metrics", h.guard(f.Metrics.ServeHTTP))
	}
	mux.HandleFunc("GET /api/v1/sweeps", h.guard(h.listSweeps))
	mux.HandleFunc("GET /api/v1/sweeps/{id}", h.guard(h.getSweep))
	mux.HandleFunc("POST /api/v1/sweeps/{id}/cancel", h.write(h.cancelSweep))
	mux.HandleFunc("GET /api/v1/pipelines", h.guard(h.listPipelines(f.Pipelines)))
	mux.HandleFunc("GET /api/v1/pipelines/{name}/runs", h.guard(h.listRuns))
	mux.HandleFunc("GET /api/v1/runs/{id}", h.guard(h.getRun))
	mux.HandleFunc("POST /api/v1/runs/{id}/cancel", h.write(h.cancelRun))
	if f.Pipelines != nil {
		mux.HandleFunc("POST /api/v1/pipelines/{name}/trigger", h.write(func(w http.ResponseWriter, r *http.Request) {
			run, err := f.Pipelines.Trigger(r.Context(), r.PathValue("name"), time.Now())
			if err != nil {
				writeErr(w, err)
				return
			}
			writeJSON(w, http.StatusCreated, run)
		}))
	}
}

// sweepSummary is one line of the sweep list.
type sweepSummary struct {
	ID      string           `json:"id"`
	State   flows.SweepState `json:"state"`
	Created time.Time        `json:"created_at"`
	Summary sweep.Summary    `json:"summary"`
}

func (h *handler) listSweeps(w http.ResponseWriter, r *http.Request) {
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	if limit <= 0 || limit > 200 {
		limit = 20
	}
	ids, err := h.flows.ListSweeps(r.Context(), limit)
	if err != nil {
		writeErr(w, err)
		return
	}
	out := make([]sweepSummary, 0, len(ids))
	for _, id := range ids {
		v, err := controller.LoadSweepView(r.Context(), h.flows, h.flowJobs, id)
		if errors.Is(err, jobs.ErrNotFound) {
			continue // expired between the index and the record
		}
		if err != nil {
			writeErr(w, err)
			return
		}
		out = append(out, sweepSummary{ID: id, State: v.Sweep.State, Created: v.Sweep.CreatedAt, Summary: v.Summary})
	}
	writeJSON(w, http.StatusOK, map[string]any{"sweeps": out})
}

// maxTrialParams bounds the trials whose parameters one sweep read
// returns: the console charts them, and a larger sweep shows its first ones.
const maxTrialParams = 2000

// sweepDetail is a sweep with each trial's parameters, which the console
// charts the metric against.
type sweepDetail struct {
	controller.SweepView
	// TrialParams holds the resolved parameters of trial i at index i, for
	// the first maxTrialParams trials.
	TrialParams []map[string]any `json:"trial_params"`
}

func (h *handler) getSweep(w http.ResponseWriter, r *http.Request) {
	v, err := controller.LoadSweepView(r.Context(), h.flows, h.flowJobs, r.PathValue("id"))
	if err != nil {
		writeErr(w, err)
		return
	}
	specs, err := h.flows.TrialSpecs(r.Context(), v.Sweep.ID, 0, min(v.Sweep.Total, maxTrialParams))
	if err != nil {
		writeErr(w, err)
		return
	}
	d := sweepDetail{SweepView: v, TrialParams: make([]map[string]any, len(specs))}
	for i, sp := range specs {
		d.TrialParams[i] = sp.Params
	}
	writeJSON(w, http.StatusOK, d)
}

// pipelineSummary is one configured pipeline with its latest runs.
type pipelineSummary struct {
	Name       string            `json:"name"`
	Definition pipeline.Pipeline `json:"definition"`
	Runs       []flows.Run       `json:"runs"`
}

// listPipelines serves GET /api/v1/pipelines: the pipelines this
// controller runs, each with its latest runs (?runs=N, default 5).
func (h *handler) listPipelines(p *controller.Pipelines) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("runs"))
		if n <= 0 || n > 100 {
			n = 5
		}
		out := []pipelineSummary{}
		if p != nil {
			for _, name := range p.Names() {
				def, _ := p.Definition(name)
				runs, err := h.flows.ListRuns(r.Context(), name, n)
				if err != nil {
					writeErr(w, err)
					return
				}
				out = append(out, pipelineSummary{Name: name, Definition: def, Runs: runs})
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"pipelines": out})
	}
}

func (h *handler) cancelSweep(w http.ResponseWriter, r *http.Request) {
	now, err := controller.CancelSweep(r.Context(), h.flows, h.flowJobs, r.PathValue("id"))
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"cancelled": now})
}

func (h *handler) listRuns(w http.ResponseWriter, r *http.Request) {
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	runs, err := h.flows.ListRuns(r.Context(), r.PathValue("name"), limit)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": runs})
}

func (h *handler) getRun(w http.ResponseWriter, r *http.Request) {
	run, err := h.flows.GetRun(r.Context(), r.PathValue("id"))
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, run)
}

func (h *handler) cancelRun(w http.ResponseWriter, r *http.Request) {
	if err := controller.CancelRun(r.Context(), h.flows, h.flowJobs, nil, r.PathValue("id"), "cancelled through the API"); err != nil {
		writeErr(w, err)
		return
	}
	run, err := h.flows.GetRun(r.Context(), r.PathValue("id"))
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, run)
}
