// Package cost turns what Ballast ran into what it cost. A [Ledger] of
// elastic worker lifetimes, fixed quota and job attempts goes in; [Compute]
// returns a [Report] of the money by pool, job, team, template and calendar
// day, and [Report.Table] prints one of those views. [Settle] settles the
// same window between teams that share the quota.
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
// # Settlement between teams
//
// [Settle] says who owes whom for the window when the fixed quota is
// divided into team shares ([shares.Config]) and settled under a
// [Chargeback] rule. It sweeps the attempts on fixed pools over time
// (their slots, or their share of a GPU, as above) and, between any two
// changes of the teams' usage, lets [shares.Config.Split] say who used
// whose slots: each team's use within its share, on others' shares and
// on common slots, and its share's slots lent (to whom) or idle. Sharing
// that one function with the policy and the live metrics is what makes a
// loan the same loan everywhere. The quotas of all fixed pools together
// are the quota the shares divide, at the fixed price. The slot-hours are
// then priced:
//
//   - share (the default): each team pays its share's part of the
//     quota's cost (ShareCost); a borrower pays LoanPrice × the fixed
//     price for each slot-hour it borrowed, to the lender (LoanCredit)
//     or, for common slots, to the platform. IdleRecovered is the
//     LoanCredit over what the share's idle time would have cost had no
//     one borrowed it, which is how much of an oversized quota the
//     others paid back.
//   - usage: the quota's cost is split among teams by the fixed
//     slot-hours each used, wherever it used them; there are no loans.
//   - even: the quota's cost is split evenly among teams with a share.
//
// Each team is also charged Elastic, its attempts on elastic pools as
// [Compute] charges them. A platform row holds what no team pays: the
// common slots' cost minus what borrowers paid for them, the elastic
// idle cost, and under usage or even the quota's cost when no team can
// be charged it (nothing used, or no share). Every rule is zero-sum: the
// teams' nets plus the platform's are what was paid, the quotas plus the
// elastic workers billed, up to rounding (tested to 1e-9 of the total).
// Jobs without a team are the team named "": they own no share, so all
// their fixed time is borrowed.
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
