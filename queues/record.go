package queues

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ballastdev/ballast/jobs"
)

// mutableFields are the record fields that change over a job's life; the
// spec never does. Keep in step with decodeFields.
var mutableFields = []string{"state", "queue", "worker", "checkpoint", "cancel", "error", "attempt", "runs", "retries",
	"requeues", "spot_preemptions", "preemptions", "created", "queued", "not_before", "started", "finished",
	"checkpoint_at", "exit_code", "metric", "pool", "qos", "placed", "placed_at"}

// claimFields are what the claim reads of a record: the fence's first
// (claimScript reads them by position), then the rest of what a worker
// needs to run the job.
var claimFields = append([]string{"state", "attempt", "ob", "worker", "gang", "runs", "spec"},
	slices.DeleteFunc(slices.Clone(mutableFields), func(f string) bool {
		return slices.Contains([]string{"state", "attempt", "worker", "runs"}, f)
	})...)

// luaStrings writes names as Lua string literals separated by commas.
func luaStrings(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// decodeRecord turns a job hash into a Job.
func decodeRecord(id string, h map[string]string) (jobs.Job, error) {
	j := decodeFields(id, h)
	if err := json.Unmarshal([]byte(h["spec"]), &j.Spec); err != nil {
		return j, fmt.Errorf("queues: job %s has an unreadable spec: %w", id, err)
	}
	return j, nil
}

// decodeFields reads everything but the spec.
func decodeFields(id string, h map[string]string) jobs.Job {
	j := jobs.Job{
		ID:              id,
		State:           jobs.State(h["state"]),
		Queue:           h["queue"],
		Worker:          h["worker"],
		Pool:            h["pool"],
		Checkpoint:      h["checkpoint"],
		CancelRequested: h["cancel"] == "1",
		LastError:       h["error"],
		Attempt:         atoi(h["attempt"]),
		Runs:            atoi(h["runs"]),
		Retries:         atoi(h["retries"]),
		Requeues:        atoi(h["requeues"]),
		SpotPreemptions: atoi(h["spot_preemptions"]),
		Preemptions:     atoi(h["preemptions"]),
		CreatedAt:       msTime(h["created"]),
		QueuedAt:        msTime(h["queued"]),
		NotBefore:       msTime(h["not_before"]),
		StartedAt:       msTime(h["started"]),
		FinishedAt:      msTime(h["finished"]),
		CheckpointAt:    msTime(h["checkpoint_at"]),
	}
	j.Placed = decodePlaced(h["placed"], j.Attempt)
	if j.Placed != nil {
		j.PlacedAt = msTime(h["placed_at"])
	}
	if code, err := strconv.Atoi(h["exit_code"]); err == nil {
		j.ExitCode = &code
	}
	if m, ok := parseMetric(h["metric"]); ok {
		j.LastMetric = &m
	}
	if q := h["qos"]; q != "" {
		var st jobs.QoSStats
		// Only RecordQoS writes it; an unreadable value is skipped like
		// the other fields decodeFields tolerates.
		if json.Unmarshal([]byte(q), &st) == nil {
			j.QoS = &st
		}
	}
	return j
}

// pairsToMap turns a flat HGETALL reply from a script into a map.
func pairsToMap(v []any) map[string]string {
	m := make(map[string]string, len(v)/2)
	for i := 0; i+1 < len(v); i += 2 {
		k, _ := v[i].(string)
		val, _ := v[i+1].(string)
		m[k] = val
	}
	return m
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func msTime(s string) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n == 0 {
		return time.Time{}
	}
	return time.UnixMilli(n).UTC()
}
