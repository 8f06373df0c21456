package chaos

import (
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"
)

// Report is what a run found. The JSON form (`-o json`) has the same fields.
type Report struct {
	// Settings the run used.
	Jobs        int      `json:"jobs"`
	Workers     int      `json:"workers"`
	Slots       int      `json:"slots_per_worker"`
	Controllers int      `json:"controllers"`
	Seed        uint64   `json:"seed"`
	WorkerTTL   float64  `json:"worker_ttl_s"`
	LeaderTTL   float64  `json:"leader_ttl_s"`
	FaultKinds  []Fault  `json:"fault_kinds"`
	Dir         string   `json:"dir"`
	Seconds     float64  `json:"seconds"`
	Verdict     string   `json:"verdict"`
	Problems    []string `json:"problems"`

	// Accepted jobs have a receipt; Refused were given up on.
	Accepted         int `json:"accepted"`
	Refused          int `json:"refused"`
	SubmitRetries    int `json:"submit_retries"`
	DuplicateReplies int `json:"duplicate_replies"`
	// Succeeded counts records that ended succeeded; ExactlyOnce those with
	// exactly one side-effect line, written by the attempt that succeeded.
	Succeeded   int `json:"succeeded"`
	ExactlyOnce int `json:"succeeded_exactly_once"`
	// Doubled counts jobs whose side effect was done more than once with
	// nothing that at-least-once delivery has to repeat to explain it: bugs.
	Doubled int `json:"doubled"`
	// DoubledPausedPastTTL: an extra attempt ran through a pause longer
	// than worker_ttl (of Redis, or of its worker process), so its worker
	// was presumed dead and the job ran again; allowed.
	DoubledPausedPastTTL int `json:"doubled_paused_past_ttl"`
	// DoubledKilledBeforeRecord: an extra attempt completed its side effect
	// and its worker was SIGKILLed before the result reached Redis; allowed.
	DoubledKilledBeforeRecord int `json:"doubled_killed_before_record"`
	// Lost: accepted but not ended at the end, record gone, or succeeded
	// with no side effect. Failed: ended failed or cancelled.
	Lost   int `json:"lost"`
	Failed int `json:"failed"`
	// UnknownEffects are side-effect lines of jobs the run was never given
	// a receipt for (a key that made two jobs would show here).
	UnknownEffects   int `json:"side_effects_of_unknown_jobs"`
	MalformedEffects int `json:"malformed_side_effect_lines"`

	// KillToRequeue is over every job running on a SIGKILLed worker:
	// Detected by the controller (worker-kill), TakenOver by the same-ID
	// restart's registration (same-id).
	Detected  Spread `json:"kill_to_requeue_detected"`
	TakenOver Spread `json:"kill_to_requeue_same_id"`
	// Unclaimed is over deliveries a killed worker had taken from asynq
	// but not yet claimed: no record names the worker, so they come back
	// when the leader finds them held (controller.DefaultHeldGrace), not
	// through worker_ttl.
	Unclaimed Spread `json:"kill_to_redelivery_unclaimed"`
	// RecordLag is, over succeeded jobs, from the side-effect line (as
	// read, up to 20 ms after its write) to the record's finished time
	// (when the worker sent the result): a worker killed inside it leaves
	// a done side effect unrecorded.
	RecordLag Spread `json:"side_effect_to_recorded"`

	Faults    []FaultReport `json:"faults"`
	Anomalies []Anomaly     `json:"anomalies"`
}

// Spread summarizes durations, in seconds.
type Spread struct {
	N      int     `json:"n"`
	Min    float64 `json:"min_s"`
	Median float64 `json:"median_s"`
	Max    float64 `json:"max_s"`
}

func spread(ds []time.Duration) Spread {
	if len(ds) == 0 {
		return Spread{}
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Spread{N: len(s), Min: s[0].Seconds(), Median: med.Seconds(), Max: s[len(s)-1].Seconds()}
}

func (s Spread) String() string {
	if s.N == 0 {
		return "no jobs were running on the killed workers"
	}
	return fmt.Sprintf("min %.2fs  median %.2fs  max %.2fs  (%d jobs)", s.Min, s.Median, s.Max, s.N)
}

// max is the longest duration, zero for none.
func (s Spread) max() time.Duration { return time.Duration(s.Max * float64(time.Second)) }

// durations prints a spread that is not of requeues.
func (s Spread) durations() string {
	if s.N == 0 {
		return "-"
	}
	return fmt.Sprintf("min %.3fs  median %.3fs  max %.3fs  (%d jobs)", s.Min, s.Median, s.Max, s.N)
}

// FaultReport is one injected fault.
type FaultReport struct {
	Fault  Fault   `json:"fault"`
	At     float64 `json:"at_s"`
	Target string  `json:"target"`
	Lasted float64 `json:"lasted_s"`
	// Running is how many jobs ran where it struck.
	Running int `json:"running_jobs"`
	// RequeueMax is the slowest kill-to-requeue of the fault's jobs.
	RequeueMax float64 `json:"requeue_max_s,omitempty"`
	Note       string  `json:"note,omitempty"`
	Problem    string  `json:"problem,omitempty"`
}

// OK reports whether the run passed: nothing lost, failed or doubled beyond
// what at-least-once allows, every kill requeued in time, every fault
// carried out.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// WriteTable prints the report for a terminal.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "ballast chaos run: %d jobs, %d workers x %d slots, %d controllers, seed %d, worker_ttl %gs, took %.1fs\n\n",
		r.Jobs, r.Workers, r.Slots, r.Controllers, r.Seed, r.WorkerTTL, r.Seconds)
	row := func(k string, v any, why string) { fmt.Fprintf(tw, "  %s\t%v\t%s\n", k, v, why) }
	row("accepted", r.Accepted, fmt.Sprintf("(%d submit retries with the same key, %d answered duplicate; %d given up)", r.SubmitRetries, r.DuplicateReplies, r.Refused))
	row("succeeded", r.Succeeded, "")
	row("succeeded, exactly one side effect", r.ExactlyOnce, "")
	row("side effects doubled", r.Doubled, "(not explained by a kill or a long pause: a bug)")
	row("doubled, paused past worker_ttl", r.DoubledPausedPastTTL, "(allowed: a worker that cannot heartbeat is presumed dead)")
	row("doubled, killed before recording", r.DoubledKilledBeforeRecord, "(allowed: the side effect was done, the worker died before saying so)")
	row("lost", r.Lost, "(accepted, never succeeded, or succeeded with no side effect)")
	row("failed", r.Failed, "")
	if r.UnknownEffects+r.MalformedEffects > 0 {
		row("side effects of unknown jobs", r.UnknownEffects, "")
		row("malformed side-effect lines", r.MalformedEffects, "")
	}
	row("kill to requeue, worker-kill", r.Detected, "(the controller finds the worker silent)")
	row("kill to requeue, same-id", r.TakenOver, "(the new process's registration takes over)")
	if r.Unclaimed.N > 0 {
		row("kill to redelivery, taken but unclaimed", r.Unclaimed, "(the leader moves a delivery held but unclaimed: no record named the dead worker)")
	}
	row("side effect to result sent", r.RecordLag.durations(), "(record's finished time: a kill in this window repeats a done side effect)")
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nfaults:")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  at\tfault\ttarget\tlasted\tjobs there\trequeue max\tnote")
	for _, f := range r.Faults {
		rq := "-"
		if f.RequeueMax > 0 {
			rq = fmt.Sprintf("%.2fs", f.RequeueMax)
		}
		note := f.Note
		if f.Problem != "" {
			note = "PROBLEM: " + f.Problem
		}
		fmt.Fprintf(tw, "  +%.1fs\t%s\t%s\t%.1fs\t%d\t%s\t%s\n", f.At, f.Fault, f.Target, f.Lasted, f.Running, rq, note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Anomalies) > 0 {
		fmt.Fprintln(w, "\njobs to look at:")
		for i, a := range r.Anomalies {
			if i == 20 {
				fmt.Fprintf(w, "  ... and %d more (-o json lists them all)\n", len(r.Anomalies)-20)
				break
			}
			fmt.Fprintf(w, "  %s %s (%s): %s at attempt %d, side effects from attempts %v: %s\n",
				a.Kind, a.Job, a.Key, a.State, a.Attempt, a.EffectAttempts, a.Why)
		}
	}
	fmt.Fprintf(w, "\nverdict: %s\n", r.Verdict)
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  - %s\n", p)
	}
	fmt.Fprintf(w, "run directory (config, process logs, side-effect file): %s\n", r.Dir)
	return nil
}

// judge fills Problems and Verdict.
func (r *Report) judge(limit time.Duration) {
	add := func(format string, a ...any) { r.Problems = append(r.Problems, fmt.Sprintf(format, a...)) }
	if r.Accepted+r.Refused < r.Jobs {
		add("%d of %d jobs were never submitted (the run ended first)", r.Jobs-r.Accepted-r.Refused, r.Jobs)
	}
	if r.Refused > 0 {
		add("%d submissions were given up on", r.Refused)
	}
	if r.Lost > 0 {
		add("%d jobs lost", r.Lost)
	}
	if r.Failed > 0 {
		add("%d jobs failed (the job itself never fails: a fault turned into a failure)", r.Failed)
	}
	if r.Doubled > 0 {
		add("%d jobs had their side effect doubled with no kill or long pause to explain it", r.Doubled)
	}
	if r.UnknownEffects > 0 {
		add("%d side effects of jobs the run never got a receipt for", r.UnknownEffects)
	}
	if r.MalformedEffects > 0 {
		add("%d malformed side-effect lines (torn writes?)", r.MalformedEffects)
	}
	for _, s := range []Spread{r.Detected, r.TakenOver} {
		if s.N > 0 && s.Max >= limit.Seconds() {
			add("kill to requeue took %.2fs, over the %s limit", s.Max, limit)
		}
	}
	if r.Unclaimed.N > 0 && r.Unclaimed.Max >= limit.Seconds() {
		add("%d deliveries a killed worker had taken but not claimed ran again only %.1fs after the kill, over the %s limit",
			r.Unclaimed.N, r.Unclaimed.Max, limit)
	}
	for _, f := range r.Faults {
		if f.Problem != "" {
			add("%s at +%.1fs: %s", f.Fault, f.At, f.Problem)
		}
	}
	r.Verdict = "PASS"
	if len(r.Problems) > 0 {
		r.Verdict = "FAIL"
	}
}
