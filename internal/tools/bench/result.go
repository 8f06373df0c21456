package bench

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// ErrExactlyOnce is wrapped by Run's error when a Ballast job did not run
// exactly once or its record did not end succeeded at its first attempt.
var ErrExactlyOnce = errors.New("exactly-once violated")

// Result holds every figure of one Run.
type Result struct {
	RedisAddr      string
	Namespace      string
	Jobs           int
	Producers      int
	Slots          int
	PollInterval   time.Duration
	LatencySamples int

	// Raw is plain asynq: enqueue, no-op handler, end to end.
	Raw Throughput
	// RawDrain is plain asynq draining a queue filled beforehand.
	RawDrain Throughput
	// Ballast is Store.Submit through the worker's claim, handler and finish.
	Ballast Throughput
	// Ratio is Ballast.PerSecond over the better of Raw and RawDrain (1
	// means no overhead).
	Ratio float64
	// RoundRatios is each round's own ratio (see Options.Rounds): their
	// spread is how much the machine moved during the run.
	RoundRatios []float64

	// RawLatency and BallastLatency are enqueue-to-start times on an idle
	// consumer.
	RawLatency     Latency
	BallastLatency Latency

	ExactlyOnce ExactlyOnce

	// Submission is single against batch submission over NATS (zero when
	// skipped).
	Submission Submission
}

// Throughput is one submit-to-complete run.
type Throughput struct {
	// Count is how many tasks or jobs completed.
	Count int
	// Elapsed runs from the first submit call to the last completion.
	Elapsed   time.Duration
	PerSecond float64
	// Calls counts the Redis round trips of the timed run by kind (a
	// pipeline is one), everything in the process included: producers,
	// polling, claims, results, heartbeats.
	Calls map[string]int
	// Usage is every command Redis ran and the CPU both sides spent.
	Usage Usage
}

// Baseline is raw asynq's better figure: end to end, or draining.
func (r Result) Baseline() Throughput { return better(r.Raw, r.RawDrain) }

func better(raw, drain Throughput) Throughput {
	if drain.PerSecond > raw.PerSecond {
		return drain
	}
	return raw
}

// per is x per task or job of t.
func (t Throughput) per(x float64) float64 {
	if t.Count == 0 {
		return 0
	}
	return x / float64(t.Count)
}

// RoundTrips is the number of Redis round trips per task or job.
func (t Throughput) RoundTrips() float64 {
	if t.Count == 0 {
		return 0
	}
	total := 0
	for _, n := range t.Calls {
		total += n
	}
	return float64(total) / float64(t.Count)
}

// perMicros is d in microseconds per task or job of t.
func (t Throughput) perMicros(d time.Duration) float64 { return t.per(float64(d.Microseconds())) }

// costs is t's cost per task or job in one line, for the progress output:
// a run whose rate stands out can be told apart as one where each job cost
// more (the machine was slower, or the work differed) or one that waited.
func (t Throughput) costs() string {
	return fmt.Sprintf("redis %.0f µs, this process %.0f µs, %.2f round trips each",
		t.perMicros(t.Usage.RedisCPU), t.perMicros(t.Usage.ClientCPU), t.RoundTrips())
}

// add sums u's counts, time, calls and usage into t: a run of several
// rounds is their total jobs over their total time.
func (t *Throughput) add(u Throughput) {
	t.Count += u.Count
	t.Elapsed += u.Elapsed
	t.PerSecond = 0
	if t.Elapsed > 0 {
		t.PerSecond = float64(t.Count) / t.Elapsed.Seconds()
	}
	if len(u.Calls) > 0 && t.Calls == nil {
		t.Calls = map[string]int{}
	}
	for k, v := range u.Calls {
		t.Calls[k] += v
	}
	t.Usage.add(u.Usage)
}

// ratioOf is ballast's jobs per second over base's (0 without a base).
func ratioOf(ballast, base Throughput) float64 {
	if base.PerSecond <= 0 {
		return 0
	}
	return ballast.PerSecond / base.PerSecond
}

func throughput(n int, d time.Duration) Throughput {
	t := Throughput{Count: n, Elapsed: d}
	if d > 0 {
		t.PerSecond = float64(n) / d.Seconds()
	}
	return t
}

// Latency summarises enqueue-to-start samples (nearest-rank percentiles).
type Latency struct {
	Samples int
	P50     time.Duration
	P90     time.Duration
	P99     time.Duration
	Max     time.Duration
}

func summarize(samples []time.Duration) Latency {
	if len(samples) == 0 {
		return Latency{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	rank := func(p float64) time.Duration {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return Latency{Samples: len(s), P50: rank(0.50), P90: rank(0.90), P99: rank(0.99), Max: s[len(s)-1]}
}

// ExactlyOnce is the verdict on every Ballast job the bench submitted.
type ExactlyOnce struct {
	// Checked is how many jobs were verified.
	Checked int
	// Violations lists every job that broke the rule (empty when it held).
	Violations []Violation
}

// Violation is one job that did not run exactly once to success.
type Violation struct {
	JobID string
	// Runs is how often its handler was called.
	Runs int
	// State and Attempt are what its record says after the run.
	State   string
	Attempt int
	Problem string
}

// add counts f's jobs and violations into e.
func (e *ExactlyOnce) add(f ExactlyOnce) {
	e.Checked += f.Checked
	e.Violations = append(e.Violations, f.Violations...)
}

// OK reports whether every job ran exactly once and succeeded.
func (e ExactlyOnce) OK() bool { return len(e.Violations) == 0 }

// Err returns nil when the rule held, else an error wrapping ErrExactlyOnce.
func (e ExactlyOnce) Err() error {
	if e.OK() {
		return nil
	}
	return fmt.Errorf("bench: %w: %d of %d jobs (first: %s: %s)", ErrExactlyOnce,
		len(e.Violations), e.Checked, e.Violations[0].JobID, e.Violations[0].Problem)
}

// maxListed bounds how many violations Print spells out: one broken run can
// produce thousands, and the first few say what went wrong.
const maxListed = 20

// Print writes the result as aligned tables.
func (r Result) Print(w io.Writer) {
	fmt.Fprintf(w, "ballast bench: redis %s, namespace %s\n", r.RedisAddr, r.Namespace)
	fmt.Fprintf(w, "jobs %d in %d rounds, producers %d, slots %d, poll interval %s, latency samples %d\n\n",
		r.Jobs, len(r.RoundRatios), r.Producers, r.Slots, r.PollInterval, r.LatencySamples)

	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "throughput (submit to complete)\tcount\telapsed\tper second")
	for _, row := range []struct {
		name string
		t    Throughput
	}{{"raw asynq, end to end", r.Raw}, {"raw asynq, draining a filled queue", r.RawDrain}, {"ballast, end to end", r.Ballast}} {
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%.0f\n", row.name, row.t.Count, row.t.Elapsed.Round(time.Millisecond), row.t.PerSecond)
	}
	fmt.Fprintf(tw, "  ratio ballast / raw's better\t\t\t%.2f\n", r.Ratio)
	if len(r.RoundRatios) > 1 {
		sp := spreadOf(r.RoundRatios)
		fmt.Fprintf(tw, "  ratio per round (%d), min / median / max\t\t\t%.2f / %.2f / %.2f\n", len(r.RoundRatios), sp.Min, sp.Median, sp.Max)
	}
	tw.Flush()
	fmt.Fprintln(w)

	tw = tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "enqueue-to-start latency (idle)\tp50\tp90\tp99\tmax")
	for _, row := range []struct {
		name string
		l    Latency
	}{{"raw asynq", r.RawLatency}, {"ballast", r.BallastLatency}} {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", row.name, millis(row.l.P50), millis(row.l.P90), millis(row.l.P99), millis(row.l.Max))
	}
	tw.Flush()
	fmt.Fprintln(w)

	r.printCalls(w)
	r.printUsage(w)
	r.Submission.print(w)

	e := r.ExactlyOnce
	if e.OK() {
		fmt.Fprintf(w, "exactly-once: ok (%d jobs, each ran once and succeeded at attempt 1)\n", e.Checked)
		return
	}
	fmt.Fprintf(w, "!!! EXACTLY-ONCE VIOLATED: %d of %d jobs !!!\n", len(e.Violations), e.Checked)
	for i, v := range e.Violations {
		if i == maxListed {
			fmt.Fprintf(w, "!!!   ... and %d more\n", len(e.Violations)-maxListed)
			break
		}
		fmt.Fprintf(w, "!!!   job %s: %s (handler runs %d, record %s at attempt %d)\n", v.JobID, v.Problem, v.Runs, v.State, v.Attempt)
	}
}

func millis(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// printCalls shows where the round trips of the two timed runs went, per
// task or job, busiest kind first.
func (r Result) printCalls(w io.Writer) {
	kinds := map[string]bool{}
	for k := range r.Raw.Calls {
		kinds[k] = true
	}
	for k := range r.Ballast.Calls {
		kinds[k] = true
	}
	if len(kinds) == 0 {
		return
	}
	per := func(t Throughput, k string) float64 {
		if t.Count == 0 {
			return 0
		}
		return float64(t.Calls[k]) / float64(t.Count)
	}
	sorted := slices.SortedFunc(maps.Keys(kinds), func(a, b string) int {
		if c := cmp.Compare(per(r.Ballast, b)+per(r.Raw, b), per(r.Ballast, a)+per(r.Raw, a)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "redis round trips per task / job\traw\tballast")
	fmt.Fprintf(tw, "  total\t%.2f\t%.2f\n", r.Raw.RoundTrips(), r.Ballast.RoundTrips())
	for _, k := range sorted {
		a, b := per(r.Raw, k), per(r.Ballast, k)
		if a < 0.005 && b < 0.005 {
			continue // background chatter, not per-job cost
		}
		fmt.Fprintf(tw, "  %s\t%.2f\t%.2f\n", k, a, b)
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// printUsage shows what Redis ran per task or job (inner commands of
// scripts included) and the CPU each side spent, for raw end to end and
// Ballast.
func (r Result) printUsage(w io.Writer) {
	raw, bal := r.Raw.Usage, r.Ballast.Usage
	if len(raw.Commands) == 0 && len(bal.Commands) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "redis commands per task / job (scripts' own included)\traw\tballast")
	fmt.Fprintf(tw, "  total\t%.1f\t%.1f\n", r.Raw.per(float64(raw.total())), r.Ballast.per(float64(bal.total())))
	// An EVALSHA is the round trip that starts a script, not work of its
	// own: the total without it counts what Redis did.
	fmt.Fprintf(tw, "  total without evalsha\t%.1f\t%.1f\n", r.Raw.per(float64(raw.total()-raw.Commands["evalsha"])),
		r.Ballast.per(float64(bal.total()-bal.Commands["evalsha"])))
	names := map[string]bool{}
	for k := range raw.Commands {
		names[k] = true
	}
	for k := range bal.Commands {
		names[k] = true
	}
	sorted := slices.SortedFunc(maps.Keys(names), func(a, b string) int {
		if c := cmp.Compare(bal.Commands[b]+raw.Commands[b], bal.Commands[a]+raw.Commands[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for _, k := range sorted {
		a, b := r.Raw.per(float64(raw.Commands[k])), r.Ballast.per(float64(bal.Commands[k]))
		if a < 0.05 && b < 0.05 {
			continue
		}
		fmt.Fprintf(tw, "  %s\t%.2f\t%.2f\n", k, a, b)
	}
	fmt.Fprintf(tw, "cpu per task / job\t\t\n")
	fmt.Fprintf(tw, "  redis server\t%.1f µs\t%.1f µs\n", r.Raw.perMicros(raw.RedisCPU), r.Ballast.perMicros(bal.RedisCPU))
	fmt.Fprintf(tw, "    of which running scripts\t%.1f µs\t%.1f µs\n", r.Raw.perMicros(raw.ScriptTime), r.Ballast.perMicros(bal.ScriptTime))
	fmt.Fprintf(tw, "  this process (producers and consumer)\t%.1f µs\t%.1f µs\n", r.Raw.perMicros(raw.ClientCPU), r.Ballast.perMicros(bal.ClientCPU))
	tw.Flush()
	fmt.Fprintln(w, "(Redis's figures are its whole server's: measure on a Redis nobody else uses at the same time)")
	fmt.Fprintln(w)
}
