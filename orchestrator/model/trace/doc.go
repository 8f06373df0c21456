// Package trace models job traces — when jobs arrive, how long they run,
// how many slots they take and on which class of capacity — for the
// simulator (orchestrator/analysis/sim), which replays a trace through the live
// scheduling policy, and for the quota planner, which sizes fixed quota from
// a trace's [Trace.Demand].
//
// Traces come from three places: the package's own CSV format ([ReadCSV],
// [WriteCSV]), importers of public cluster traces ([ReadAlibabaGPU2023],
// [ReadAlibabaSpot2026], [ReadPAI2020]) and a generator of the load rhythms of Ballast's design
// ([Generate], [DefaultSynthetic]). All of them return jobs sorted by submit
// time, validated against the [Job] contract, with team and template
// strings shared between jobs so a million-job trace holds one copy of each.
// Readers stream their input with a bounded line length ([MaxLineBytes])
// and refuse more than [MaxJobs] jobs; a problem in the input is a
// [*ParseError] naming the line and column.
//
// # CSV format
//
// A UTF-8 text file, one job per line, with this header:
//
//	submit_s,duration_s,slots,class,team,template,checkpointable,deadline_s
//
// and these columns:
//
//   - submit_s: seconds from the trace start, decimal ("12.5"), >= 0.
//   - duration_s: run time when never interrupted, decimal seconds, > 0.
//   - slots: slots the job occupies, a whole number >= 1.
//   - class: core or burst.
//   - team, template: any text without a control character (no line break,
//     no carriage return, no NUL) and valid UTF-8; a value holding a comma
//     or a quote is quoted as in RFC 4180 ("search, web"; "say ""hi""").
//   - checkpointable: true or false (any letter case).
//   - deadline_s: seconds after submission by which the job must have
//     finished; empty for none.
//
// Two optional columns size a job beyond its slots. A file has neither,
// replicas, requires, or both in that order after deadline_s; WriteCSV
// writes both when some job needs them and neither otherwise:
//
//   - replicas: how many members of slots each the job runs together, a
//     gang ([Job.Replicas]); empty, 0 or 1 for a single job.
//   - requires: labels a worker must carry to run the job, as
//     key=value separated by ';' ("gpu_model=A10;zone=b"), keys in the
//     form of Ballast's label keys; a value may list several that a
//     worker may carry, separated by '|' ("gpu_model=V100M16|V100M32");
//     empty for none ([Job.Requires]).
//
// Four more optional columns follow, in this order: any of the optional
// columns may be left out, and WriteCSV writes them from replicas up to
// the last one some job needs:
//
//   - share: thousandths of one GPU the job uses, 1 to 999, on a job of
//     one slot and one member ([Job.Share]); empty or 0 for whole slots.
//   - cpus and memory_bytes: what each member needs of its worker beyond
//     its slots ([Job.CPUs], [Job.Memory]); empty or 0 for none.
//   - grace_s: seconds the job has to checkpoint and stop once told to
//     ([Job.Grace]); empty or 0 for none.
//
// Seconds are read exactly to the nanosecond when written as plain decimals;
// exponent forms ("1e-05", as some tools write) are accepted too. WriteCSV
// writes the shortest exact decimal, so a written trace reads back equal.
// Rows need not be sorted: ReadCSV sorts by submit_s, keeping file order for
// equal times. Blank lines are skipped, and so are lines starting with '#'.
// Lines are at most [MaxLineBytes] long and quoted values cannot span lines.
//
// Before the header, a comment can carry [Trace.Start], the wall-clock time
// of offset 0, as RFC 3339 and optionally a time zone name whose
// daylight-saving rules per-day reports should follow:
//
//	# start: 2025-04-01T00:00:00+02:00 Europe/Berlin
//
// WriteCSV writes it whenever Start is set. A tool that does not skip
// comments (pandas without comment='#') should read traces without a start.
// testdata/example.csv is a small example.
//
// # Public traces
//
// [ReadAlibabaGPU2023] reads the pod lists of Alibaba's GPU cluster trace
// 2023, [ReadAlibabaSpot2026] the job table of its trace of AI jobs on spot
// GPUs 2026 (gangs of several workers, each job requiring its GPU model),
// and [ReadPAI2020] the job table of its PAI trace 2020. Each maps the rows
// onto jobs by the rules its documentation gives, skips the rows that
// cannot be jobs and counts them in [ImportStats]. The fixtures in testdata
// are written by hand to the published formats; the real files are not part
// of the repository.
//
// # Synthetic traces
//
// [Generate] draws a trace from a [Synthetic]: periodic pipelines (core,
// fixed times of day, with deadlines), ad hoc pulses (burst, a Poisson rate
// that rises in working hours) and a mixed load at 30% of its peak that
// rises to the peak over the last days of each month (burst). Run times are
// log-normal. The same Synthetic, seed included, always gives the same
// trace; generating a million jobs takes a fraction of a second and about
// one allocation of the final slice.
package trace
