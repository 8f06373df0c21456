package chaos

import (
	"fmt"
	"sort"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Anomaly is one job whose fate the report singles out: lost, failed, or
// with its side effect done more than once.
type Anomaly struct {
	Job     string `json:"job"`
	Key     string `json:"idempotency_key"`
	State   string `json:"state"`
	Attempt int    `json:"attempt"`
	// EffectAttempts are the attempts that wrote a side-effect line, in
	// file order.
	EffectAttempts []int  `json:"effect_attempts"`
	Kind           string `json:"kind"`
	Why            string `json:"why"`
}

// The kinds of anomaly.
const (
	anomalyLost        = "lost"
	anomalyFailed      = "failed"
	anomalyDoubled     = "doubled"
	anomalyPausedTTL   = "doubled-paused-past-ttl"
	anomalyKilledFirst = "doubled-killed-before-record"
)

// tally is the per-job outcome of a run, before it is put into a Report.
type tally struct {
	accepted, succeeded, once       int
	doubled, pausedTTL, killedFirst int
	lost, failed, unknown           int
	anomalies                       []Anomaly
	unknownJobs                     []string
	// lag is, per succeeded job, from its side-effect line being read to
	// the finished time its worker sent: the window in which a worker's
	// death makes at-least-once delivery do the side effect again.
	lag []time.Duration
}

// classify sets every accepted job against its record and its side-effect
// lines. A job done more than once is allowed only when each extra line
// came from an attempt that at-least-once delivery has to repeat: one
// running on a worker that was SIGKILLed after the line was written and
// before the result could be recorded, or one running through a Redis
// pause longer than worker_ttl, of Redis or of its worker process (the
// worker could not heartbeat, so it was declared dead while the attempt
// went on). Anything else is a bug.
func classify(ids map[string]string, records map[string]jobs.Job, effects []effect, faults []injected, workerTTL time.Duration) tally {
	byJob := map[string][]effect{}
	for _, e := range effects {
		byJob[e.job] = append(byJob[e.job], e)
	}
	keys := make([]string, 0, len(ids))
	for k := range ids {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var t tally
	t.accepted = len(ids)
	for _, key := range keys {
		id := ids[key]
		effs := byJob[id]
		delete(byJob, id)
		j, ok := records[id]
		a := Anomaly{Job: id, Key: key, State: string(j.State), Attempt: j.Attempt}
		for _, e := range effs {
			a.EffectAttempts = append(a.EffectAttempts, e.attempt)
		}
		switch {
		case !ok:
			t.lost++
			a.Kind, a.Why, a.State = anomalyLost, "accepted, but its record is gone", "missing"
		case j.State == jobs.StateSucceeded && len(effs) == 0:
			t.succeeded++
			t.lost++
			a.Kind, a.Why = anomalyLost, "recorded succeeded, but no attempt wrote its side effect"
		case j.State == jobs.StateSucceeded:
			t.succeeded++
			for _, e := range effs {
				if e.attempt == j.Attempt && !j.FinishedAt.IsZero() {
					t.lag = append(t.lag, j.FinishedAt.Sub(e.seen))
				}
			}
			kind, why := extras(j, effs, faults, workerTTL)
			switch kind {
			case "":
				t.once++
				continue
			case anomalyPausedTTL:
				t.pausedTTL++
			case anomalyKilledFirst:
				t.killedFirst++
			default:
				t.doubled++
			}
			a.Kind, a.Why = kind, why
		case j.State.Terminal():
			t.failed++
			a.Kind, a.Why = anomalyFailed, fmt.Sprintf("ended %s: %s", j.State, j.LastError)
		default:
			t.lost++
			a.Kind, a.Why = anomalyLost, fmt.Sprintf("still %s at the end (last error %q)", j.State, j.LastError)
		}
		t.anomalies = append(t.anomalies, a)
	}
	for id, effs := range byJob {
		t.unknown += len(effs)
		t.unknownJobs = append(t.unknownJobs, id)
	}
	sort.Strings(t.unknownJobs)
	return t
}

// extras judges a succeeded job's side-effect lines: "" when there is
// exactly one, from the attempt that succeeded; otherwise the kind of
// doubling and why.
func extras(j jobs.Job, effs []effect, faults []injected, workerTTL time.Duration) (string, string) {
	final := 0
	for _, e := range effs {
		if e.attempt == j.Attempt {
			final++
		}
	}
	switch {
	case final == 0:
		return anomalyDoubled, fmt.Sprintf("succeeded at attempt %d, which wrote no side effect; others did", j.Attempt)
	case final > 1:
		return anomalyDoubled, fmt.Sprintf("attempt %d wrote its side effect %d times: one attempt ran twice", j.Attempt, final)
	case len(effs) == 1:
		return "", ""
	}
	kind, why := anomalyKilledFirst, ""
	for _, e := range effs {
		if e.attempt == j.Attempt {
			continue
		}
		k := attemptKey{j.ID, e.attempt}
		switch f, ok := allowedBy(k, e, faults, workerTTL); {
		case !ok:
			return anomalyDoubled, fmt.Sprintf("attempt %d wrote a side effect, was not recorded, and no kill or long pause explains it", e.attempt)
		case f.fault == FaultRedisPause || f.fault == FaultWorkerPause:
			kind = anomalyPausedTTL
			why = join(why, fmt.Sprintf("attempt %d ran through a %s %s of %s (worker_ttl %s): its worker was presumed dead",
				e.attempt, f.lasted.Round(100*time.Millisecond), f.fault, f.target, workerTTL))
		default:
			when := fmt.Sprintf("line read %s before the kill", f.at.Sub(e.seen).Round(time.Millisecond))
			if !e.seen.Before(f.at) {
				when = "line read in the poll right after the kill: written at most 20 ms before it"
			}
			why = join(why, fmt.Sprintf("attempt %d wrote its side effect (%s) just before %s %s was SIGKILLed, which left it unrecorded",
				e.attempt, when, f.target, f.fault))
		}
	}
	return kind, why
}

// allowedBy finds the fault that explains an extra side effect of attempt k.
func allowedBy(k attemptKey, e effect, faults []injected, workerTTL time.Duration) (injected, bool) {
	for _, f := range faults {
		if !f.running[k] {
			continue
		}
		switch f.fault {
		case FaultWorkerKill, FaultSameID:
			if e.index < f.effectsBefore {
				return f, true
			}
		case FaultRedisPause, FaultWorkerPause:
			if f.lasted > workerTTL {
				return f, true
			}
		}
	}
	return injected{}, false
}
