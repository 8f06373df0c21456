package telemetry

import (
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

func TestQoSMetrics(t *testing.T) {
	m := newTest(t, Options{})
	ws := []queues.WorkerInfo{
		{ID: "w1", Pool: "fixed", Slots: 4, Isolation: &queues.Isolation{Mode: "v1", Limits: []queues.LimitState{
			{Group: "burst", Limit: "cpu", InForce: true}, {Group: "burst", Limit: "memory", InForce: true},
			{Group: "burst", Limit: "egress", Reason: "no tc"},
		}}},
		{ID: "w2", Pool: "fixed", Slots: 4, SelfFences: 2, SelfFencedSeconds: 3.5}, // reports no isolation: no series
	}
	m.SetSnapshot(SnapshotOf(time.Now(), nil, ws, nil, nil))
	// The event's data as a bus consumer decodes it: JSON numbers.
	for _, oom := range []bool{true, false} {
		m.Observe(events.Event{Type: events.TypeJobFailed, Data: map[string]any{"class": string(jobs.ClassBurst), "qos": map[string]any{
			"group": "burst", "cpu_throttled_seconds": 0.25, "group_cpu_throttled_seconds": 1.5,
			"io_read_bytes": float64(3 << 20), "io_write_bytes": float64(1 << 20), "oom_killed": oom,
		}}})
	}
	fams := scrape(t, m)
	wantType(t, fams, "ballast_worker_qos_limits", dto.MetricType_GAUGE)
	wantValue(t, fams, "ballast_worker_qos_limits", map[string]string{"worker": "w1", "mode": "v1", "state": "in_force"}, 2)
	wantValue(t, fams, "ballast_worker_qos_limits", map[string]string{"worker": "w1", "mode": "v1", "state": "not_in_force"}, 1)
	if got := len(fams["ballast_worker_qos_limits"].GetMetric()); got != 2 {
		t.Errorf("ballast_worker_qos_limits: %d series, want 2 (w2 reports none)", got)
	}
	// Every worker reports its self-fences, none or some.
	wantType(t, fams, "ballast_worker_self_fences_total", dto.MetricType_COUNTER)
	wantValue(t, fams, "ballast_worker_self_fences_total", map[string]string{"worker": "w2", "pool": "fixed"}, 2)
	wantValue(t, fams, "ballast_worker_self_fenced_seconds_total", map[string]string{"worker": "w2", "pool": "fixed"}, 3.5)
	wantValue(t, fams, "ballast_worker_self_fences_total", map[string]string{"worker": "w1", "pool": "fixed"}, 0)
	// The group's throttling is the larger: a group quota is counted there.
	wantValue(t, fams, "ballast_job_cpu_throttled_seconds_total", map[string]string{"group": "burst"}, 3)
	wantValue(t, fams, "ballast_job_io_bytes_total", map[string]string{"group": "burst", "direction": "read"}, 6<<20)
	wantValue(t, fams, "ballast_job_io_bytes_total", map[string]string{"group": "burst", "direction": "write"}, 2<<20)
	wantValue(t, fams, "ballast_job_memory_kills_total", map[string]string{"group": "burst"}, 1)
}
