package jobs

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// Spec is a fully resolved job: what the worker runs and what the scheduler
// needs to place it. It is stored in the job record and never changes.
type Spec struct {
	Template       string         `json:"template,omitempty"`
	Params         map[string]any `json:"params,omitempty"`
	Command        []string       `json:"command,omitempty"`
	Handler        string         `json:"handler,omitempty"`
	Class          Class          `json:"class"`
	Rhythm         Rhythm         `json:"rhythm"`
	Checkpointable bool           `json:"checkpointable,omitempty"`
	Retryable      bool           `json:"retryable,omitempty"`
	MaxRetries     int            `json:"max_retries,omitempty"`
	// NoRetryExitCodes are the template's: an attempt that exits with one
	// of them fails the job without a retry.
	NoRetryExitCodes []int             `json:"no_retry_exit_codes,omitempty"`
	Timeout          Duration          `json:"timeout"`
	Grace            Duration          `json:"grace"`
	Team             string            `json:"team,omitempty"`
	Labels           map[string]string `json:"labels,omitempty"`
	IdempotencyKey   string            `json:"idempotency_key,omitempty"`
	// Metric names the key of a metric the job reports by printing a JSON
	// line such as {"loss": 0.12}; the worker records every value reported
	// under that key, in order. Sweep trials set it to the sweep's metric.
	Metric string `json:"metric,omitempty"`
	// Env and PassEnv are the template's, with parameters substituted into
	// Env: the worker adds them to the job's built environment.
	Env     map[string]string `json:"env,omitempty"`
	PassEnv []string          `json:"pass_env,omitempty"`
	// TraceParent is the W3C traceparent of the span that submitted the job.
	// It lives in the spec because the spec is what travels with every
	// attempt through Redis and asynq: each attempt's span, on whichever
	// worker, joins the submit's trace from it. It is not part of the
	// request, so idempotency ignores it.
	TraceParent string `json:"traceparent,omitempty"`
	// CoreMaxWait, when set, is how long this core job may wait for fixed
	// quota before rule 7 may overflow it to on-demand capacity, in place of
	// the global capacity.core_max_wait: from its template, or its pipeline
	// step. Nil uses the global; 0 overflows at once.
	CoreMaxWait *Duration `json:"core_max_wait,omitempty"`
	// StartBy is the latest start that still meets the deadline of the
	// pipeline run this job is a step of: the deadline less the step's
	// expected duration (pipeline.LatestStart) and the time on-demand
	// capacity takes to start it. Zero for none. The policy
	// lets the job wait no later than this, whatever CoreMaxWait says.
	// Derived from history when the step is submitted, so like TraceParent
	// it is left out of the idempotency check: a retried submission must
	// find the first job even if the history moved meanwhile.
	StartBy time.Time `json:"start_by,omitempty"`
	// QoS and Limits are the template's QoS group (empty: the team's or
	// the placement's) and the job's own limits within it.
	QoS    string  `json:"qos,omitempty"`
	Limits *Limits `json:"limits,omitempty"`
	// Size is the template's, with the submission's slots: what placement
	// and billing count.
	Size
}

// Retries reports whether a failed attempt that exited with code (nil:
// killed, timed out, or never started) is worth retrying, retries being
// how many it has had: the job is retryable, has retries left, and did not
// exit with a code its template says no retry can fix.
func (s Spec) Retries(code *int, retries int) bool {
	if !s.Retryable || retries >= s.MaxRetries {
		return false
	}
	return code == nil || !slices.Contains(s.NoRetryExitCodes, *code)
}

// OwnMaxWait is how long the job may wait in the current attempt, queued at
// queuedAt, before it may overflow, and whether it has a wait of its own at
// all (false: the global capacity.core_max_wait, global, applies). Its own
// core_max_wait replaces the global one; a StartBy only ever shortens the
// wait (of its own, or else the global), since a deadline is a reason to
// overflow sooner, never later. A StartBy already past gives 0: overflow
// at once.
func (s Spec) OwnMaxWait(queuedAt time.Time, global time.Duration) (time.Duration, bool) {
	wait, has := global, false
	if s.CoreMaxWait != nil {
		wait, has = max(s.CoreMaxWait.Std(), 0), true
	}
	if !s.StartBy.IsZero() {
		wait, has = min(wait, max(s.StartBy.Sub(queuedAt), 0)), true
	}
	return wait, has
}

// Job is the record of one job: its spec and where it is now. The record in
// Redis is the truth; an asynq task is only one delivery of one attempt.
type Job struct {
	ID    string `json:"id"`
	Spec  Spec   `json:"spec"`
	State State  `json:"state"`
	// Attempt numbers deliveries; it is the fencing token that makes stale
	// deliveries harmless. The first attempt is 1.
	Attempt int `json:"attempt"`
	// Runs counts the attempts that started on a worker: what a user means
	// by "how often did it run". A delivery that was moved while it waited
	// (lent, reclaimed, overflowed) raises Attempt, not Runs; a gang's
	// attempt counts once, when its last member is claimed.
	Runs  int    `json:"runs"`
	Queue string `json:"queue"`
	// Placed is, for a sized job, the worker of each member of the current
	// attempt, once the controller placed it; nil while it waits for
	// placement and for jobs that need none.
	Placed []string `json:"placed,omitempty"`
	// PlacedAt is when the current attempt was placed (zero when Placed
	// is nil): a placement that has waited long is a reservation whose
	// slots are still busy.
	PlacedAt time.Time `json:"placed_at,omitzero"`
	Worker   string    `json:"worker,omitempty"`
	// Pool is the pool of the worker that claimed the current (or last)
	// attempt: a burst job on lent fixed capacity shows the fixed pool.
	Pool string `json:"pool,omitempty"`
	// Retries counts attempts started again after a failure.
	Retries int `json:"retries"`
	// Requeues counts attempts moved for any other reason than a failure or
	// a preemption (worker lost, drain).
	Requeues int `json:"requeues"`
	// Preemptions counts attempts the controller stopped to run the job
	// elsewhere (reclaim, migrate, spot notice); they are not in Requeues.
	Preemptions int `json:"preemptions"`
	// Readmitted marks a job sent back to its queue after it was admitted
	// once (its worker died, left or drained, it was preempted, or its
	// delivery was held): its queue serves it before every job never
	// taken, in CreatedAt order, so work already admitted does not wait
	// again behind what came after it. A retry after a failure clears it.
	Readmitted bool `json:"readmitted,omitempty"`
	// SpotPreemptions counts the preemptions the spot market caused (spot
	// notices); past the configured budget the job runs on-demand only.
	SpotPreemptions int `json:"spot_preemptions"`
	// Checkpoint is the last checkpoint the job reported (opaque to Ballast:
	// a path, a URI or a JSON object). The next attempt resumes from it.
	Checkpoint string `json:"checkpoint,omitempty"`
	// CheckpointAt is when the last checkpoint was recorded: the work done
	// since is what a preemption would throw away.
	CheckpointAt time.Time `json:"checkpoint_at,omitempty"`
	// LastMetric is the last value the job reported under Spec.Metric, nil
	// before the first one. Kept in the record so that readers of the job
	// (the sweep controller) need not fetch the whole series.
	LastMetric      *float64  `json:"last_metric,omitempty"`
	CancelRequested bool      `json:"cancel_requested,omitempty"`
	ExitCode        *int      `json:"exit_code,omitempty"`
	LastError       string    `json:"last_error,omitempty"`
	CreatedAt       time.Time `json:"created_at"`
	// QueuedAt is when the current attempt was queued; NotBefore is the
	// earliest time it may start (retry back-off).
	QueuedAt   time.Time `json:"queued_at"`
	NotBefore  time.Time `json:"not_before,omitempty"`
	StartedAt  time.Time `json:"started_at,omitempty"`
	FinishedAt time.Time `json:"finished_at,omitempty"`
	// QoS is what the last attempt's cgroup counted (CPU time and
	// throttling, IO bytes, peak memory), nil when it ran without one.
	QoS *QoSStats `json:"qos,omitempty"`
}

// EligibleAt is when the current attempt could first start: when it was
// queued, or the end of its retry back-off if that came later. Waits for
// capacity are measured from here, so a deliberate back-off is not counted
// as a wait.
func (j Job) EligibleAt() time.Time {
	if j.NotBefore.After(j.QueuedAt) {
		return j.NotBefore
	}
	return j.QueuedAt
}

// NewID returns a job ID that sorts by creation time: 12 hex digits of
// milliseconds then 16 of randomness.
func NewID(now time.Time) string {
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		panic(fmt.Sprintf("jobs.NewID: no randomness: %v", err)) // crypto/rand never fails on Linux
	}
	// As fmt's "%012x" then the hex of r, without fmt: a batch makes
	// thousands at a time.
	var b [28]byte
	ms := strconv.AppendInt(b[:0], now.UnixMilli(), 16)
	if len(ms) > 12 || now.UnixMilli() < 0 {
		return fmt.Sprintf("%012x%s", now.UnixMilli(), hex.EncodeToString(r[:]))
	}
	pad := 12 - len(ms)
	copy(b[pad:], ms)
	for i := range pad {
		b[i] = '0'
	}
	hex.Encode(b[12:], r[:])
	return string(b[:])
}

// ValidID reports whether id has the form NewID gives: 28 lowercase hex
// digits. A reader checks it before using an ID from outside as part of a
// key.
func ValidID(id string) bool {
	if len(id) != 28 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
