// Package bench measures what Ballast's bookkeeping costs on top of plain
// asynq, in one process against one Redis, for in-process no-op jobs:
//
//   - submit-to-complete throughput of raw asynq tasks and of Ballast jobs
//     (same producers, same slots, same poll interval), and their ratio;
//   - enqueue-to-start latency on an idle worker, for both;
//   - exactly-once: every Ballast job ran its handler once and its record
//     ended succeeded at attempt 1.
//
// Everything runs in a fresh namespace whose keys are deleted at the end, so
// a bench can run next to a live install or tests on the same Redis.
package bench
