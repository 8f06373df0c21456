package telemetry

import (
	"strings"

	"github.com/ballastdev/ballast/orchestrator/model/events"
)

// Observe records what one job event says: a start and its wait, an end and
// its outcome, a preemption and its reason, or an overflow to on-demand
// capacity, or a checkpoint's upload, restore, refusal or fallback. Other
// events are ignored.
// The controller feeds it every event on the bus while it leads, so a
// standby does not count the same jobs again.
func (m *Metrics) Observe(e events.Event) {
	if m == nil || m.observeCheckpoint(e) {
		return
	}
	// A share event counts there; an admission is a move, counted
	// nowhere else, and a reclaim's requeue comes as its own event.
	if m.observeShare(e) {
		return
	}
	class := events.JobClass(e)
	if q := events.JobQoS(e); q != nil {
		m.JobQoS(q)
	}
	switch e.Type {
	case events.TypeJobRunning:
		s, _ := events.ParseJobStart(e)
		m.JobStarted(class, s.Pool, s.Wait)
	case events.TypeJobSucceeded:
		m.JobFinished(class, OutcomeSucceeded)
	case events.TypeJobFailed:
		m.JobFinished(class, OutcomeFailed)
	case events.TypeJobCancelled:
		m.JobFinished(class, OutcomeCancelled)
	case events.TypeJobRequeued:
		if r, ok := PreemptionReason(e.Reason); ok {
			m.Preempted(r)
		}
	case events.TypeJobOverflowed:
		o, _ := events.ParseOverflow(e)
		m.Overflowed(o.Pool)
	}
}

// PreemptionReason classifies a requeue by its reason text, as the worker
// and the controller write it: "preempted: reclaim (rule 1: …)",
// "preempted: migrate (…)" and "preempted: repack (…)" from the capacity
// policy (its action names),
// "preempted: spot notice" from a spot reclaim, "worker … draining" from a
// drain and "worker lost" from dead-worker recovery. A retry after a
// failure is not a preemption.
func PreemptionReason(reason string) (string, bool) {
	r := strings.TrimSpace(reason)
	switch {
	case r == "worker lost":
		return ReasonWorkerLost, true
	case strings.HasSuffix(r, "draining"):
		return ReasonDrain, true
	}
	rest, ok := strings.CutPrefix(r, "preempted")
	if !ok {
		return "", false
	}
	rest = strings.TrimLeft(rest, ": ")
	switch {
	case strings.HasPrefix(rest, "spot"):
		return ReasonSpot, true
	case strings.HasPrefix(rest, "migrate"):
		return ReasonMigrate, true
	case strings.HasPrefix(rest, "repack"):
		return ReasonRepack, true
	}
	// A bare "preempted" or a reclaim: the policy's only other stop.
	return ReasonReclaim, true
}
