package bench

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
)

// Spread is the least, the median and the largest of one figure over
// repeated runs.
type Spread struct {
	Min, Median, Max float64
}

func spreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Spread{Min: s[0], Median: m, Max: s[len(s)-1]}
}

// Summary is every headline figure of repeated Runs on one machine: one
// run on a shared machine says little, and the spread says how much the
// median can be trusted. Each run's ratio is taken against that run's own
// baseline, so drift between runs does not enter it.
type Summary struct {
	Runs int
	// Jobs per second.
	Raw, RawDrain, Ballast Spread
	Ratio                  Spread
	// RoundRatio is the ratio of every round of every run.
	RoundRatio Spread
	// Per task or job: Redis commands (scripts' own included, with and
	// without the EVALSHA that starts each script), round trips, and CPU
	// in microseconds.
	RawCommands, BallastCommands             Spread
	RawCommandsNoEval, BallastCommandsNoEval Spread
	RawRoundTrips, BallastRoundTrips         Spread
	RawRedisCPU, BallastRedisCPU             Spread
	RawClientCPU, BallastClientCPU           Spread
	BallastLatencyP50Ms, RawLatencyP50Ms     Spread
	// Jobs per second of the submission phase, and their ratio; zero
	// when it was skipped.
	SubmitSingle, SubmitBatch, SubmitRatio    Spread
	ExactlyOnceChecked, ExactlyOnceViolations int
}

// Summarize gathers rs into a Summary.
func Summarize(rs []Result) Summary {
	s := Summary{Runs: len(rs)}
	col := func(f func(Result) float64) Spread {
		xs := make([]float64, len(rs))
		for i, r := range rs {
			xs[i] = f(r)
		}
		return spreadOf(xs)
	}
	cmds := func(t Throughput, eval bool) float64 {
		n := t.Usage.total()
		if !eval {
			n -= t.Usage.Commands["evalsha"] + t.Usage.Commands["eval"]
		}
		return t.per(float64(n))
	}
	us := func(t Throughput, redis bool) float64 {
		if redis {
			return t.perMicros(t.Usage.RedisCPU)
		}
		return t.perMicros(t.Usage.ClientCPU)
	}
	s.Raw = col(func(r Result) float64 { return r.Raw.PerSecond })
	s.RawDrain = col(func(r Result) float64 { return r.RawDrain.PerSecond })
	s.Ballast = col(func(r Result) float64 { return r.Ballast.PerSecond })
	s.Ratio = col(func(r Result) float64 { return r.Ratio })
	var rounds []float64
	for _, r := range rs {
		rounds = append(rounds, r.RoundRatios...)
	}
	s.RoundRatio = spreadOf(rounds)
	s.RawCommands = col(func(r Result) float64 { return cmds(r.Raw, true) })
	s.BallastCommands = col(func(r Result) float64 { return cmds(r.Ballast, true) })
	s.RawCommandsNoEval = col(func(r Result) float64 { return cmds(r.Raw, false) })
	s.BallastCommandsNoEval = col(func(r Result) float64 { return cmds(r.Ballast, false) })
	s.RawRoundTrips = col(func(r Result) float64 { return r.Raw.RoundTrips() })
	s.BallastRoundTrips = col(func(r Result) float64 { return r.Ballast.RoundTrips() })
	s.RawRedisCPU = col(func(r Result) float64 { return us(r.Raw, true) })
	s.BallastRedisCPU = col(func(r Result) float64 { return us(r.Ballast, true) })
	s.RawClientCPU = col(func(r Result) float64 { return us(r.Raw, false) })
	s.BallastClientCPU = col(func(r Result) float64 { return us(r.Ballast, false) })
	s.RawLatencyP50Ms = col(func(r Result) float64 { return float64(r.RawLatency.P50.Microseconds()) / 1000 })
	s.BallastLatencyP50Ms = col(func(r Result) float64 { return float64(r.BallastLatency.P50.Microseconds()) / 1000 })
	s.SubmitSingle = col(func(r Result) float64 { return r.Submission.Single.PerSecond })
	s.SubmitBatch = col(func(r Result) float64 { return r.Submission.Batch.PerSecond })
	s.SubmitRatio = col(func(r Result) float64 { return r.Submission.Ratio })
	for _, r := range rs {
		s.ExactlyOnceChecked += r.ExactlyOnce.Checked
		s.ExactlyOnceViolations += len(r.ExactlyOnce.Violations)
	}
	return s
}

// Print writes the summary as one table.
func (s Summary) Print(w io.Writer) {
	fmt.Fprintf(w, "over %d runs                                  (min / median / max)\n", s.Runs)
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	row := func(name, format string, sp Spread) {
		fmt.Fprintf(tw, "  %s\t"+format+"\t"+format+"\t"+format+"\n", name, sp.Min, sp.Median, sp.Max)
	}
	row("raw asynq end to end, per second", "%.0f", s.Raw)
	row("raw asynq draining, per second", "%.0f", s.RawDrain)
	row("ballast end to end, per second", "%.0f", s.Ballast)
	row("ratio ballast / raw's better", "%.2f", s.Ratio)
	row("  the same, each round of each run", "%.2f", s.RoundRatio)
	row("redis commands per task, raw", "%.1f", s.RawCommands)
	row("redis commands per job, ballast", "%.1f", s.BallastCommands)
	row("  the same without EVALSHA, raw", "%.1f", s.RawCommandsNoEval)
	row("  the same without EVALSHA, ballast", "%.1f", s.BallastCommandsNoEval)
	row("round trips per task, raw", "%.2f", s.RawRoundTrips)
	row("round trips per job, ballast", "%.2f", s.BallastRoundTrips)
	row("redis cpu per task µs, raw", "%.1f", s.RawRedisCPU)
	row("redis cpu per job µs, ballast", "%.1f", s.BallastRedisCPU)
	row("client cpu per task µs, raw", "%.1f", s.RawClientCPU)
	row("client cpu per job µs, ballast", "%.1f", s.BallastClientCPU)
	row("start latency p50 ms, raw", "%.1f", s.RawLatencyP50Ms)
	row("start latency p50 ms, ballast", "%.1f", s.BallastLatencyP50Ms)
	if s.SubmitBatch.Max > 0 {
		row("submission over NATS, single, per second", "%.0f", s.SubmitSingle)
		row("submission over NATS, batch, per second", "%.0f", s.SubmitBatch)
		row("ratio batch / single", "%.2f", s.SubmitRatio)
	}
	tw.Flush()
	if s.ExactlyOnceViolations == 0 {
		fmt.Fprintf(w, "exactly-once: ok in every run (%d jobs)\n", s.ExactlyOnceChecked)
	} else {
		fmt.Fprintf(w, "!!! EXACTLY-ONCE VIOLATED: %d of %d jobs over the runs !!!\n", s.ExactlyOnceViolations, s.ExactlyOnceChecked)
	}
}
