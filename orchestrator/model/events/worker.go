package events

import "time"

// The Data keys of worker events, written and read in this file only.
const (
	workerPool    = "pool"
	workerSlots   = "slots"
	workerSilence = "silence_seconds"
)

// WorkerInfo is what a worker.up event (Pool and Slots) or a
// worker.stopped event (Pool only) says about the worker.
type WorkerInfo struct {
	Pool string
	// Slots is 0 on a worker.stopped event, which does not carry it.
	Slots int
}

// UpData is w as a worker.up event's Data.
func (w WorkerInfo) UpData() map[string]any {
	return map[string]any{workerPool: w.Pool, workerSlots: w.Slots}
}

// StoppedData is w as a worker.stopped event's Data.
func (w WorkerInfo) StoppedData() map[string]any {
	return map[string]any{workerPool: w.Pool}
}

// ParseWorkerInfo reads the pool and slots of a worker.up or
// worker.stopped event; false for any other type.
func ParseWorkerInfo(e Event) (WorkerInfo, bool) {
	if e.Type != TypeWorkerUp && e.Type != TypeWorkerStopped {
		return WorkerInfo{}, false
	}
	var w WorkerInfo
	w.Pool, _ = e.Data[workerPool].(string)
	w.Slots = int(number(e.Data[workerSlots]))
	return w, true
}

// WorkerLostData is the Data of a worker.lost event: how long the worker
// had been silent when the controller gave it up.
func WorkerLostData(silence time.Duration) map[string]any {
	return map[string]any{workerSilence: silence.Seconds()}
}

// WorkerSilence reads the silence of a worker.lost event back; false for
// any other type or one that does not say.
func WorkerSilence(e Event) (time.Duration, bool) {
	if e.Type != TypeWorkerLost {
		return 0, false
	}
	s, ok := e.Data[workerSilence].(float64)
	return time.Duration(s * float64(time.Second)), ok
}
