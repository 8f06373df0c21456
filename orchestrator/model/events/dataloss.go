package events

import "time"

// The Data keys of the system events about Redis data, written and read
// in this file only.
const (
	lossReason   = "reason"
	lossAt       = "at"
	lossLastSeen = "last_seen"
	lossOldEpoch = "old_epoch"
	lossNewEpoch = "new_epoch"
	lossBy       = "detected_by"

	recRebuilt         = "rebuilt"
	recRerun           = "rerun"
	recSkippedFinished = "skipped_finished"
	recAlreadyPresent  = "already_present"
	recResubmitted     = "resubmitted"
	recNoSpec          = "no_spec"
)

// DataLost is what a system.redis_data_lost event says: the loss record's
// fields (queues.DataLoss, which events does not import).
type DataLost struct {
	Reason   string
	At       time.Time
	LastSeen time.Time
	OldEpoch string
	NewEpoch string
	// DetectedBy names the controller or worker that noticed the loss.
	DetectedBy string
}

// Data is l as a system.redis_data_lost event's Data.
func (l DataLost) Data() map[string]any {
	return map[string]any{lossReason: l.Reason, lossAt: l.At, lossLastSeen: l.LastSeen,
		lossOldEpoch: l.OldEpoch, lossNewEpoch: l.NewEpoch, lossBy: l.DetectedBy}
}

// ParseDataLost reads a system.redis_data_lost event back; false for any
// other type.
func ParseDataLost(e Event) (DataLost, bool) {
	if e.Type != TypeRedisDataLost {
		return DataLost{}, false
	}
	l := DataLost{At: timeOf(e.Data[lossAt]), LastSeen: timeOf(e.Data[lossLastSeen])}
	l.Reason, _ = e.Data[lossReason].(string)
	l.OldEpoch, _ = e.Data[lossOldEpoch].(string)
	l.NewEpoch, _ = e.Data[lossNewEpoch].(string)
	l.DetectedBy, _ = e.Data[lossBy].(string)
	return l, true
}

// Recovered is what a system.redis_recovered event says: the counts of a
// recovery's report (controller.RecoverReport).
type Recovered struct {
	Rebuilt         int
	Rerun           int
	SkippedFinished int
	AlreadyPresent  int
	Resubmitted     int
	NoSpec          int
}

// Data is r as a system.redis_recovered event's Data.
func (r Recovered) Data() map[string]any {
	return map[string]any{recRebuilt: r.Rebuilt, recRerun: r.Rerun, recSkippedFinished: r.SkippedFinished,
		recAlreadyPresent: r.AlreadyPresent, recResubmitted: r.Resubmitted, recNoSpec: r.NoSpec}
}

// ParseRecovered reads a system.redis_recovered event back; false for any
// other type.
func ParseRecovered(e Event) (Recovered, bool) {
	if e.Type != TypeRedisRecovered {
		return Recovered{}, false
	}
	n := func(k string) int { return int(number(e.Data[k])) }
	return Recovered{Rebuilt: n(recRebuilt), Rerun: n(recRerun), SkippedFinished: n(recSkippedFinished),
		AlreadyPresent: n(recAlreadyPresent), Resubmitted: n(recResubmitted), NoSpec: n(recNoSpec)}, true
}
