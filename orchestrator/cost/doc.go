// Package cost turns what Ballast ran into what it cost. A [Ledger] of
// elastic worker lifetimes, fixed quota and job attempts goes in; [Compute]
// returns a [Report] of the money by pool, job, team, template and calendar
// day, and [Report.Table] prints one of those views.
//
// The package is pure: no I/O, no goroutines, no clock reads. The window and
// the time zone come in with the ledger, so a report can be recomputed
// exactly, and the report does not depend on the order of the ledger's
// slices.
//
// # What is paid
//
// An elastic worker is billed for its whole life, from [WorkerSpan.Start]
// (the launch request or the start, whichever the provider bills from) to
// its release, rounded up the way [policy.Pool.PaidUntil] rounds: to the
// pool's billing unit and never below its MinBilling. Using PaidUntil keeps
// one billing rule in the codebase: the release policy, the simulator and
// this ledger cannot disagree on what a minute or an hour costs. A worker's
// price per hour is the pool's PricePerSlotHour times its slots. A fixed
// [Quota] costs Slots × PricePerSlotHour for every hour of the window, used
// or not.
//
// # What is charged to jobs
//
// A job attempt is charged its slot-hours at its pool's price: the elastic
// pool's PricePerSlotHour, or the quota's price for a fixed pool. For an
// elastic worker this is its billed cost split among the attempts on it by
// slot-time. What a worker was billed for that no attempt used (empty
// slots, the time before its first job and after its last, and the rounding
// up to the billing unit and the minimum) is the pool's idle cost and is not
// charged to jobs: it follows from the release policy and from packing, not
// from any one job, and spreading it over whichever jobs happened to share a
// worker would make the same job cost different amounts from run to run.
// The unused part of the quota is likewise reported as fixed idle. So for
// every pool, every day and the totals, attributed cost + idle cost = paid
// cost, and used share + idle share = 1.
//
// # The window
//
// Everything is clipped to [Ledger.From, Ledger.Until): attempts, lost work,
// quota time, and each worker's billed life after rounding. A worker whose
// billed hour runs past Until is charged up to Until here and the rest in
// the next window, so the reports of adjacent windows add up to the report
// of both. A worker or attempt with a zero End is still running and counts
// up to Until.
//
// # Premium and lost work
//
// The premium of elastic slot-hours is what they cost minus what the same
// slot-hours would have cost at the fixed price. The fixed price is the
// quotas' cost per slot-hour (their total cost over their total slot-hours,
// which is the one quota's price when there is one). A negative premium is
// a saving: spot capacity is often cheaper than quota. Fixed slot-hours have
// no premium, and idle cost is not in it (it is reported on its own). With
// no quota there is no fixed price to compare with, and the premium is zero.
//
// [Usage.LostWork] is the work an attempt threw away when it was stopped:
// the last LostWork of the attempt, [End-LostWork, End). Its slot-hours and
// their cost are reported apart from, and also included in, the attempt's
// slot-hours and cost, since the pool was paid for them all the same.
//
// # Days
//
// Days are calendar days in Ledger.Location (UTC when nil). Attempts, lost
// work, billed worker time and quota time that cross midnight are split at
// midnight, so a day's figures are what was used and paid on that day; days
// across a daylight-saving change have 23 or 25 hours. Every day that
// overlaps the window is listed, as the quota costs money on each.
//
// # Bad input
//
// Compute refuses a ledger it cannot price rather than guess, and names
// every problem at once (a *jobs.ValidationError): unknown or duplicate
// pools, workers and quotas on the wrong kind of pool, negative slots or
// prices, an End before its Start, lost work longer than its attempt, a job
// whose attempts disagree on its team or template, a fixed pool used
// without a quota, and attempts that use more slots than their pool had at
// some instant: more than the quota's slots, or more than the elastic
// workers alive then, which includes an elastic attempt that no worker span
// covers. Attempts are not tied to a particular worker, so coverage is
// checked for the pool as a whole.
package cost
