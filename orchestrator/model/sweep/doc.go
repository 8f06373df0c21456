// Package sweep is Ballast's pure model of hyperparameter sweeps: a template
// plus a search space, fanned out as one burst-class job per trial.
//
// A Spec is the body of NATS ballast.sweeps.submit and of `ballast sweep`.
// DecodeSpec parses it strictly; Expand validates it against the template
// catalog and returns every trial with its parameters and resolved job spec.
// The search space is exactly one of:
//
//   - grid: the cartesian product of per-parameter value lists, in a fixed
//     order (parameters sorted by name, the last one varying fastest, values
//     in the order given);
//   - random: Count trials drawn from per-parameter distributions (uniform,
//     log_uniform, int_uniform, choice) by a PCG generator seeded from Seed,
//     so the same spec always yields the same trials;
//   - list: explicit parameter sets, one per trial.
//
// A sweep has at most MaxTrials trials; a grid's size is computed before it is
// expanded, so an oversize grid costs nothing. Sweeps run as burst work only:
// Expand refuses a template whose class is core instead of silently moving
// work the operator declared fixed-quota-only onto elastic or spot capacity.
//
// Trials report a metric by printing a JSON line such as {"loss": 0.1,
// "step": 5}; ParseMetric reads it. Summarize computes progress and the best
// trial, Room says how many pending trials to enqueue under the max-parallel
// limit, and ShouldStop applies the optional median early-stopping rule.
//
// The package does no I/O, starts no goroutines and reads no clock: the
// intake, the CLI, the worker and the controller share it.
package sweep
