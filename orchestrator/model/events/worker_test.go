package events

import (
	"testing"
	"time"
)

func TestWorkerInfoWire(t *testing.T) {
	w := WorkerInfo{Pool: "spot-eu", Slots: 4}
	sameWire(t, w.UpData(), map[string]any{"pool": "spot-eu", "slots": 4})
	sameWire(t, w.StoppedData(), map[string]any{"pool": "spot-eu"})
	e := stored(t, `{"id":"u","type":"worker.up","worker":"w1","time":"2026-12-01T09:00:00Z","data":{"pool":"spot-eu","slots":4}}`)
	got, ok := ParseWorkerInfo(e)
	if !ok {
		t.Fatal("a stored worker.up event did not parse")
	}
	sameValue(t, "ParseWorkerInfo", got, w)
	e = stored(t, `{"id":"s","type":"worker.stopped","worker":"w1","time":"2026-12-01T09:00:00Z","data":{"pool":"spot-eu"}}`)
	got, _ = ParseWorkerInfo(e)
	sameValue(t, "ParseWorkerInfo (stopped)", got, WorkerInfo{Pool: "spot-eu"})
	if _, ok := ParseWorkerInfo(Event{Type: TypeWorkerLost}); ok {
		t.Fatal("a worker.lost event parsed as worker info")
	}
}

func TestWorkerLostWire(t *testing.T) {
	sameWire(t, WorkerLostData(90*time.Second), map[string]any{"silence_seconds": 90.0})
	e := stored(t, `{"id":"l","type":"worker.lost","worker":"w1","time":"2026-12-01T09:00:00Z","data":{"silence_seconds":90}}`)
	got, ok := WorkerSilence(e)
	if !ok || got != 90*time.Second {
		t.Fatalf("WorkerSilence = %v, %v; want 1m30s", got, ok)
	}
	if _, ok := WorkerSilence(Event{Type: TypeWorkerUp}); ok {
		t.Fatal("a worker.up event named a silence")
	}
}
