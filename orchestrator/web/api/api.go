package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/checkpoints"
	"github.com/ballastdev/ballast/queues/flows"
	"github.com/ballastdev/ballast/queues/leader"
	"github.com/ballastdev/ballast/queues/logs"
	"github.com/ballastdev/ballast/queues/redisinfo"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/queues/usage"
	"github.com/ballastdev/ballast/workers/checkpoint"
)

// Status is the body of GET /api/v1/status.
type Status struct {
	Leader  string              `json:"leader"`
	Workers []queues.WorkerInfo `json:"workers"`
	Queues  []queues.QueueStats `json:"queues"`
	Counts  map[jobs.State]int  `json:"recent_jobs_by_state"`
	Recent  int                 `json:"recent_jobs_examined"`
	// Overflowed lists the core jobs rule 7 sent to on-demand capacity that
	// are still queued or running there, oldest first.
	Overflowed []OverflowedJob `json:"overflowed"`
	// Redis says whether the Redis in use keeps accepted jobs across a
	// restart and under memory pressure.
	Redis redisinfo.Durability `json:"redis"`
	// Topology is the Redis topology in use: mode, the masters serving
	// now, and on a cluster the shard that holds the namespace.
	Topology redisinfo.Topology `json:"redis_topology"`
	// DataLoss is the recorded loss of Redis data not yet recovered or
	// acknowledged (nil: none): jobs accepted before it may be missing.
	DataLoss *queues.DataLoss `json:"data_loss,omitempty"`
	// Epoch identifies the life of the namespace's data in Redis; zero
	// until a controller first runs.
	Epoch queues.Epoch `json:"redis_epoch"`
	// Engines names the NATS servers, the event stream's replicas and the
	// elastic capacity provider of the serving controller; nil when it
	// serves no overview.
	Engines *insight.Engines `json:"engines,omitempty"`
}

// OverflowedJob is one core job overflowed to on-demand capacity.
type OverflowedJob struct {
	ID       string     `json:"id"`
	Template string     `json:"template"`
	Team     string     `json:"team,omitempty"`
	State    jobs.State `json:"state"`
	Queue    string     `json:"queue"`
	// Pool and Worker are set once it runs.
	Pool   string `json:"pool,omitempty"`
	Worker string `json:"worker,omitempty"`
	// WaitedSeconds is how long it waited from queued to start, or until
	// now if it has not started.
	WaitedSeconds float64 `json:"waited_seconds"`
}

// Handler serves the API: jobs, status and submission; the pipeline and
// sweep endpoints of flows; and, when in has a Live, the overview, cost and
// advice endpoints with the dashboard. An empty token turns authentication
// off (dev mode on localhost only; the config refuses it elsewhere).
//
// Handler takes the concrete store because it is where the store is split
// into the parts the endpoints use (stores.go): together they need more
// calls than one narrow interface should list. The runs and sweeps are
// the flows store on the same kernel, the attempts' usage its accounting
// store, the output lines its log store, the workers its registry, the
// committed checkpoints its checkpoint ledger, the leader its lease and
// Redis's settings and topology its redisinfo.
func Handler(store *queues.Store, sub intake.Submitter, token string, fl Flows, in Insight) http.Handler {
	h := &handler{jobs: store, ledger: usage.New(store), output: logs.New(store), workers: registry.New(store),
		lease: leader.New(store), redis: redisinfo.New(store), flows: flows.New(store), flowJobs: store, cluster: store,
		committed: checkpoints.New(store), sub: sub,
		auth: token != "", token: sha256.Sum256([]byte(token)), sessionKey: macKey(token),
		jobEvents: fl.JobEvents, ckStore: fl.Checkpoints, live: in.Live}
	mux := newRouter()
	mux.HandleFunc("GET "+OpenAPIPath, serveOpenAPI)
	h.mountFlows(mux, fl, token)
	h.mountInsight(mux, in)
	mux.Handle("POST "+intake.SubmitPath, intake.HTTPHandler(sub, token))
	mux.HandleFunc("GET /api/v1/jobs", h.guard(h.list))
	mux.HandleFunc("GET /api/v1/jobs/{id}", h.guard(h.get))
	mux.HandleFunc("GET /api/v1/jobs/{id}/logs", h.guard(h.logs))
	mux.HandleFunc("GET /api/v1/jobs/{id}/attempts", h.guard(h.attempts))
	mux.HandleFunc("GET /api/v1/jobs/{id}/checkpoints", h.guard(h.checkpoints))
	mux.HandleFunc("POST /api/v1/jobs/{id}/cancel", h.write(h.cancel))
	mux.HandleFunc("POST /api/v1/jobs/{id}/retry", h.write(h.retry))
	mux.HandleFunc("GET "+SessionPath, h.guard(h.serveSession))
	mux.HandleFunc("GET /api/v1/status", h.guard(h.status))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		if err := store.Redis().Ping(r.Context()).Err(); err != nil {
			writeErr(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	return mux
}

type handler struct {
	// The store in three parts (stores.go), the flows store, the
	// accounting store, the log store, the registry, the checkpoint
	// ledger, the lease and the Redis reader: each endpoint reaches only
	// the part it needs. flowJobs are the jobs of runs and sweeps, for the
	// flow endpoints' views and cancels; ledger holds the usage entries of
	// attempts; committed lists a job's checkpoints.
	jobs     JobDesk
	ledger   AttemptLedger
	output   LogReader
	workers  WorkerLister
	lease    LeaseHolder
	redis    RedisReader
	flows    FlowDesk
	flowJobs controller.FlowJobs
	cluster  StatusReader
	// committed lists a job's checkpoints (queues/checkpoints).
	committed CheckpointLister
	sub       intake.Submitter
	auth      bool
	token     [32]byte
	// sessionKey signs the console's session cookies and write tokens
	// (session.go).
	sessionKey []byte
	jobEvents  JobEvents     // nil: attempts have no reasons
	live       *insight.Live // nil: attempts are priced at zero
	// ckStore reads the manifests of kept checkpoints (nil: listed by
	// key only).
	ckStore *checkpoint.Store
}

// guard lets a request through with the bearer token, or, for reads only,
// with the console's session cookie. Writes through guard never accept the
// cookie: a browser would send it along with a request another site
// forged. The console's own writes go through write instead.
func (h *handler) guard(f http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if h.auth {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			good := ok && h.tokenOK(got)
			if !ok && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
				_, good = h.session(r)
			}
			if !good {
				w.Header().Set("WWW-Authenticate", `Bearer realm="ballast"`)
				writeJSON(w, http.StatusUnauthorized, intake.ErrorBody{Error: intake.Error{Code: intake.CodeUnauthorized,
					Message: "missing or wrong bearer token: send the header Authorization: Bearer TOKEN"}})
				return
			}
		}
		f(w, r)
	}
}

// tokenOK compares hashes in constant time, so neither the token's length
// nor its prefix leaks through timing.
func (h *handler) tokenOK(got string) bool {
	sum := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(sum[:], h.token[:]) == 1
}

func (h *handler) get(w http.ResponseWriter, r *http.Request) {
	j, err := h.jobs.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, j)
}

func (h *handler) logs(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.ParseInt(r.URL.Query().Get("limit"), 10, 64)
	if n <= 0 || n > 10000 {
		n = 1000
	}
	lines, err := h.output.Logs(r.Context(), r.PathValue("id"), r.URL.Query().Get("after"), n)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"lines": lines})
}

func (h *handler) cancel(w http.ResponseWriter, r *http.Request) {
	res, err := h.jobs.Cancel(r.Context(), r.PathValue("id"))
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"result": string(res)})
}

func (h *handler) status(w http.ResponseWriter, r *http.Request) {
	st, err := CollectStatus(r.Context(), h.cluster, h.workers, h.lease, h.redis)
	if err != nil {
		writeErr(w, err)
		return
	}
	if h.live != nil {
		e := h.live.Source.Engines
		st.Engines = &e
	}
	writeJSON(w, http.StatusOK, st)
}

func writeErr(w http.ResponseWriter, err error) {
	var ve *jobs.ValidationError
	switch {
	case errors.Is(err, jobs.ErrNotFound):
		writeJSON(w, http.StatusNotFound, intake.ErrorBody{Error: intake.Error{Code: "not_found", Message: err.Error()}})
	case errors.As(err, &ve):
		writeJSON(w, http.StatusBadRequest, intake.ErrorBody{Error: intake.Error{Code: intake.CodeInvalid, Message: err.Error(), Problems: ve.Problems}})
	case errors.Is(err, jobs.ErrUnavailable):
		writeJSON(w, http.StatusServiceUnavailable, intake.ErrorBody{Error: intake.Error{Code: intake.CodeUnavailable, Message: err.Error()}})
	default:
		writeJSON(w, http.StatusInternalServerError, intake.ErrorBody{Error: intake.Error{Code: intake.CodeInternal, Message: err.Error()}})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// retry submits a new job from a finished job's spec, as `ballast retry`
// does. A job still queued or running is refused: a second copy would run
// beside it.
func (h *handler) retry(w http.ResponseWriter, r *http.Request) {
	old, err := h.jobs.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		writeErr(w, err)
		return
	}
	if !old.State.Terminal() {
		writeJSON(w, http.StatusConflict, intake.ErrorBody{Error: intake.Error{Code: intake.CodeInvalid,
			Message: fmt.Sprintf("job %s is still %s: only a finished job can be retried (cancel it first, or wait for it)", old.ID, old.State)}})
		return
	}
	sub, err := jobs.Resubmission(old)
	if err != nil {
		writeErr(w, err)
		return
	}
	receipt, err := h.sub.Submit(r.Context(), sub)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"retry_of": old.ID, "receipt": receipt})
}
