// Package usage is the accounting store: what capacity was used, by whom
// and for how long, which the cost ledger, settlement between teams and
// the advisor price and judge. It is kept apart from the job records
// because it lives by other rules: records expire with their retention
// and keep only the last attempt, while cost is reported per attempt over
// weeks (controller.cost_retention) and trimmed by the leader alone.
//
// What it owns, by key (every key under the namespace's hash tag, named
// in queues/keys.go):
//   - usage: one JSON entry per ended attempt, scored by its end. Usage
//     and JobUsage read it; TrimAccounting drops what ended before the
//     retention.
//   - lives and lives:end: one member per worker life ("startMs|pool|
//     slots|id", see queues.ParseLife), scored by its start, and the end
//     of each ended life. WorkerLives reads them; TrimAccounting closes
//     the lives whose worker left the registry without closing them, then
//     drops the lives that ended before the retention.
//   - launches: the elastic launches the controller asked a provider for
//     whose worker has not registered yet (RecordLaunches,
//     PendingLaunches), so a life starts at its launch, and a launch that
//     never registers is billed as a life of its own (EndLaunch). The
//     controller's Hybrid holds this store as its LaunchBook.
//   - series:NAME: sampled series (RecordSample, Samples), such as the
//     fixed quota's idle share the leader records once a minute for the
//     advisor.
//
// What stays in the kernel (package queues), because it must change in
// the same step as a job or a worker: the scripts that end an attempt
// (finish, requeue, a worker's leave, recovery of a dead worker, the
// requeue of attempts no worker runs) write its usage entry with the job's end, so an
// attempt is recorded exactly once and never for a delivery the fencing
// dropped (usageLua in queues/usage.go); the heartbeat opens a worker's
// life, taking over its pending launch, and deregistration and recovery
// close it. This package reads what those scripts write and writes only
// launches, the lives of launches that never registered, the ends of
// orphaned lives and the series.
//
// Job metrics (ReportMetric, Metrics) are not accounting: they are fenced
// writes to a running job's record and stay in the kernel.
package usage
