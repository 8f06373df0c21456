package queues

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// mutableFields are the record fields that change over a job's life; the
// spec never does. Keep in step with decodeFields.
var mutableFields = []string{"state", "queue", "worker", "checkpoint", "cancel", "error", "attempt", "runs", "retries",
	"requeues", "spot_preemptions", "preemptions", "created", "queued", "not_before", "started", "finished",
	"checkpoint_at", "exit_code", "metric", "pool", "qos", "placed", "placed_at", "readmit"}

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

// fields are a record's fields by name, however they were read: a hash
// read whole, or the values of a claim, which come by position and are
// decoded without building a map of them (a take decodes every job it
// claims, and the map was the largest allocation of a job's claim).
type fields interface {
	get(name string) string
}

// hashFields are fields read as a map.
type hashFields map[string]string

func (h hashFields) get(name string) string { return h[name] }

// decodeRecord turns a job hash into a Job.
func decodeRecord(id string, h map[string]string) (jobs.Job, error) {
	return decodeRecordFrom(id, hashFields(h))
}

// decodeRecordFrom turns a record's fields into a Job.
func decodeRecordFrom(id string, h fields) (jobs.Job, error) {
	j := decodeFieldsFrom(id, h)
	// Decoded into a spec of its own: what json.Unmarshal is given lives
	// on the heap, and the job around it (twice the spec's size) need not.
	var sp jobs.Spec
	err := json.Unmarshal([]byte(h.get("spec")), &sp)
	j.Spec = sp
	if err != nil {
		return j, fmt.Errorf("queues: job %s has an unreadable spec: %w", id, err)
	}
	return j, nil
}

// decodeFields reads everything but the spec.
func decodeFields(id string, h map[string]string) jobs.Job {
	return decodeFieldsFrom(id, hashFields(h))
}

// decodeFieldsFrom reads everything but the spec.
func decodeFieldsFrom(id string, h fields) jobs.Job {
	j := jobs.Job{
		ID:              id,
		State:           jobs.State(h.get("state")),
		Queue:           h.get("queue"),
		Worker:          h.get("worker"),
		Pool:            h.get("pool"),
		Checkpoint:      h.get("checkpoint"),
		CancelRequested: h.get("cancel") == "1",
		Readmitted:      h.get("readmit") == "1",
		LastError:       h.get("error"),
		Attempt:         atoi(h.get("attempt")),
		Runs:            atoi(h.get("runs")),
		Retries:         atoi(h.get("retries")),
		Requeues:        atoi(h.get("requeues")),
		SpotPreemptions: atoi(h.get("spot_preemptions")),
		Preemptions:     atoi(h.get("preemptions")),
		CreatedAt:       msTime(h.get("created")),
		QueuedAt:        msTime(h.get("queued")),
		NotBefore:       msTime(h.get("not_before")),
		StartedAt:       msTime(h.get("started")),
		FinishedAt:      msTime(h.get("finished")),
		CheckpointAt:    msTime(h.get("checkpoint_at")),
	}
	j.Placed = decodePlaced(h.get("placed"), j.Attempt)
	if j.Placed != nil {
		j.PlacedAt = msTime(h.get("placed_at"))
	}
	if c := h.get("exit_code"); c != "" {
		if code, err := strconv.Atoi(c); err == nil {
			j.ExitCode = &code
		}
	}
	if m, ok := parseMetric(h.get("metric")); ok {
		j.LastMetric = &m
	}
	if q := h.get("qos"); q != "" {
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

// atoi is s as an int, 0 when it is not one. An absent field is common
// and is answered before strconv, whose error for it allocates.
func atoi(s string) int {
	if s == "" {
		return 0
	}
	n, _ := strconv.Atoi(s)
	return n
}

func msTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n == 0 {
		return time.Time{}
	}
	return time.UnixMilli(n).UTC()
}
