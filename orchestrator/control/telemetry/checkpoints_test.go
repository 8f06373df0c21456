package telemetry

import (
	"encoding/json"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/ballastdev/ballast/orchestrator/model/events"
)

// TestCheckpointMetrics: the workers' checkpoint events, as decoded from
// the bus, land in the checkpoint instruments; a plain checkpoint event
// (no store) moves none of them.
func TestCheckpointMetrics(t *testing.T) {
	m := newTest(t, Options{})
	now := time.Now()
	up := events.CheckpointTransfer{JobID: "j", Attempt: 1, Manifest: "jobs/j/manifests/a.json", Bytes: 3000, Duration: 2 * time.Second, Time: now}
	up2 := up
	up2.Bytes, up2.Duration = 500, 500*time.Millisecond
	back := events.CheckpointTransfer{JobID: "j", Attempt: 2, Bytes: 1200, Duration: 4 * time.Second, Time: now}
	setback := events.CheckpointSetback{JobID: "j", Attempt: 2, Time: now}
	corrupt, unfinished := setback, setback
	corrupt.Cause, unfinished.Cause = events.FallbackCorrupt, events.FallbackUnfinished
	evs := []events.Event{up.CommitEvent(), up2.CommitEvent(), back.RestoreEvent(), setback.RefusedEvent(),
		corrupt.FallbackEvent(), corrupt.FallbackEvent(), unfinished.FallbackEvent(),
		{Type: events.TypeJobCheckpoint, JobID: "j", Time: now, Data: map[string]any{"checkpoint": "x"}}}
	for _, e := range evs {
		b, _ := json.Marshal(e)
		var decoded events.Event
		if err := json.Unmarshal(b, &decoded); err != nil {
			t.Fatal(err)
		}
		m.Observe(decoded)
	}
	fams := scrape(t, m)
	wantValue(t, fams, "ballast_checkpoint_uploaded_bytes_total", nil, 3500)
	wantValue(t, fams, "ballast_checkpoint_restored_bytes_total", nil, 1200)
	wantValue(t, fams, "ballast_checkpoint_refused_total", nil, 1)
	wantValue(t, fams, "ballast_checkpoint_fallbacks_total", map[string]string{"cause": "corrupt"}, 2)
	wantValue(t, fams, "ballast_checkpoint_fallbacks_total", map[string]string{"cause": "unfinished"}, 1)
	for name, want := range map[string][2]float64{
		"ballast_checkpoint_upload_duration_seconds":  {2, 2.5},
		"ballast_checkpoint_restore_duration_seconds": {1, 4},
	} {
		wantType(t, fams, name, dto.MetricType_HISTOGRAM)
		h := series(fams, name, nil).GetHistogram()
		if float64(h.GetSampleCount()) != want[0] || h.GetSampleSum() != want[1] {
			t.Errorf("%s: %d samples summing to %v, want %v and %v", name, h.GetSampleCount(), h.GetSampleSum(), want[0], want[1])
		}
	}
}
