// Package policy decides, once per controller tick, how Ballast moves work
// between fixed quota and elastic capacity. It owns the rules of the
// design (reclaim, lend, scale up, move back below the low watermark,
// release, and repack an under-used elastic worker's checkpointable work
// so it can go, hold between the watermarks, core overflow, placement of
// sized jobs, team shares) and nothing else:
// [Decide] reads a [Snapshot] and returns a [Plan] of actions; carrying the
// actions out (Redis moves, control messages, provider calls) belongs to the
// controller.
//
// The package is pure: no I/O, no goroutines, no clock reads and no global
// randomness; time comes in as an argument. That is what lets the live
// controller and the discrete-event simulator share one decision function,
// lets tests replay any situation exactly, and lets a plan be printed and
// compared ("ballast plan") before anything is applied.
//
// Capacity is counted in slots. A job holds Slots of them on one worker,
// a gang Replicas x Slots across workers of one region. One-slot jobs wait
// in the queues workers read, and take any free slot; a sized job (more
// than one slot, a gang, CPUs, memory or labels to match) waits in no
// such queue and starts only where rule 8 places it (Action Place, with
// the worker of each member), and the worker holds its slots for it as
// they free. A placement its workers will never start (one is gone,
// draining, or reads no place queue of its own) rule 8 takes back first
// (Action Unplace), and the job is placed again next tick; so is the
// reservation of a core job past its max wait, with core overflow on and
// an on-demand pool whose machines may hold it, which rule 7 then sends
// there rather than hold it for a full quota of its flavor or size. Every count
// the other rules use (FixedLoad, the watermarks, lending, migration,
// reclaim victims, pool sizes) is in slots, so a snapshot of one-slot
// jobs gets the plan it always got.
//
// Decisions are deterministic down to the order of the actions, whatever the
// order of the snapshot's slices. Plans are idempotent across ticks: moves
// already in flight are recorded in the snapshot (Job.PendingAction, Launch,
// draining workers) and are counted instead of being planned again. [Apply]
// writes that in-flight state into a snapshot, which is both the contract for
// the controller and the step the simulator uses between ticks.
//
// A caller that decides every tick over thousands of jobs keeps an [Index]
// instead: it puts and removes jobs and workers as they change, and
// [Index.Decide] reads queues already in order and counts already made,
// so a tick costs what changed and what the rules read. [Decide] is
// IndexOf(snapshot).Decide, the full rebuild; a property test holds an
// index built by changes to it. The simulator keeps one, and so does the
// live controller, fed by the job records' changes
// (control/controller/livestate.go).
//
// Team shares (rule 9, only when Config.Shares is on; off, every rule
// plans as it did without teams). The fixed quota is divided into
// teams' shares, the rest common. A team's use is the slots of its jobs
// running on fixed workers, placed there, or bound for core or loan.
// Core work waits in QueueHeld until rule 9 admits it to core (Action
// Admit): first all work within its team's share, whether or not a slot
// is free, then loans in fair order (least borrowed over weight, then
// least decayed usage, Snapshot.TeamUsage). Only reclaimable work
// (checkpointable, retryable, its grace plus a tick within the strictest
// reclaim_within) may run above its share, within its team's borrow
// limit, and only while free common slots and the others' idle shares
// up to their lend limits cover every loan (shares.Config.Split counts
// them, as the ledger does). Rules 2, 4 and 8 ask the same of what they
// lend, migrate or place on fixed workers. Which running jobs are loans
// is decided each tick: a team's jobs in order (not reclaimable first,
// then by start), those that fit in its share within it, the rest
// loans. When an owner's admitted work cannot start, rule 1 becomes rule
// 9's reclaim for owners: exactly the missing slots, counting reclaims in
// flight, taken from loans only (never from work within any share), the
// team borrowing most over its weight first, least lost work first, a
// gang whole; a loan partly within its team's share (a sized job or GPU
// share that only partly fits) only when no other is left, so the owner
// still wins; a sized owner's job takes its slots in the same order, and
// a GPU share counts as freeing only the slots that empty once it
// leaves. A reclaimed core loan goes back to held. So does an admitted
// core job sent back for any other reason (its worker died, left or
// drained): readmitted, it is first in line for admission again and
// counts in its team's use only once admitted. Readmitted core jobs
// found in core instead (records from before, or rebuilt) count as
// admitted work (in share or loan by the same attribution as queued
// work, a loan queued ahead of an owner's work counting in the reclaims
// for it), and no new loan is admitted while they exceed the lendable
// room of the quota left up. Optional
// rebalancing lets a borrower preempt a bigger borrower's loan, never so
// far that the victim's team could preempt back.
//
// Why in the policy: the owner's guarantee is an invariant of every plan,
// not of one controller, so the simulator proves the same rule the
// controller runs; and an admission gate (held, then Admit) rather than a
// check when a worker takes a job keeps the fixed workers' queues as
// they are, and keeps every move a plan can print and Apply can record.
// Rule 9 admits, reclaims and unlends together with rules 1, 2 and 7
// until nothing more moves, since each changes who uses what: a plan
// stays its own fixed point.
//
// How the watermarks work together. Rule 2 admits pending burst jobs to the
// loan queue while fixed utilization, counting everything already queued for
// fixed slots, stays at or under the high watermark; nothing ever undoes a
// loan except core work that cannot start. Rule 4 adds the expensive moves
// (checkpoint-and-migrate, draining elastic workers) only below the low
// watermark. Between the two nothing is migrated or drained, so utilization
// that wobbles around either watermark cannot make work flap back and forth.
package policy
