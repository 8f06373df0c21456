// Package gangs is the gang protocol: how the n members of a gang
// (jobs.Size.Replicas n > 1), placed on workers of one region, come to
// start together, and how a member that cannot start gives up. It owns
// the member claim, the start barrier and the give-up (their Lua scripts
// are beside the Go that runs them), and Member, the one type a worker
// drives per gang delivery: Join claims the member, waits at the barrier
// and gives the member up itself when the gang does not start, so the
// worker makes one call and acts on its answer.
//
// # Keys
//
// The package has no keys of its own; a gang lives in its job's record.
// It writes the record's gang fields, each naming the attempt it was
// written for so a new attempt needs no clean-up of the last one's:
//
//	gang    n, written by the first claim (the size never changes)
//	m<i>    "attempt|worker" of member i
//	coord   "attempt|host:port" chosen by member 0's worker
//
// and, at the n-th claim, the record's start (state, worker, started,
// pool, runs); the job's ID in each claiming worker's running set
// (worker:<id>:jobs), and the outbox when a give-up moves the attempt on.
// It reads the workers' registry, incarnation leases and own asynq queues
// (Held).
//
// # What stays in the kernel
//
// Whatever must change the job record in the same script as an end, a
// requeue, a beat or a recovery stays in queues, with the Lua helpers that
// fence a running gang on membership (queues.GangLua: gangMember,
// gangWorkers, gangUnlist): a member's end (FinishMember, d<i>, one usage
// record for the gang), the hand-over a draining member asks of member 0
// (RequestGangHandOver), the whole gang's requeue by any member or on a
// lost worker (requeue, heartbeat, recovery, leave), the repair of an end
// whose reply was lost (gangRunsNowhere), and the placement that names
// each member's worker ("placed", queues.Store.Place).
//
// # A gang's attempt
//
// The record at attempt a; who moves each edge in brackets.
//
//	queued, unplaced
//	  │ Place [controller; kernel placeScript]: placed = "a|w0,w1,..."
//	  ▼
//	queued, placed ──ClaimMember i [member i's worker; memberClaimScript]──┐
//	  │  ▲              m<i> = "a|worker"; coord when i = 0                 │
//	  │  └─────────── while fewer than n members are claimed ◄───────────────┘
//	  │
//	  ├─ n-th ClaimMember [script] ─► running at a, on record under member
//	  │                               0's worker; runs + 1
//	  │
//	  └─ Abandon [a claimed member's worker; abandonScript], the
//	     placement taken back [controller; kernel], or a dead member
//	     worker's recovery [kernel] ─► queued at a+1, unplaced [the
//	     controller places it again]
//
//	running at a
//	  ├─ FinishMember i, success, not the last [member i's worker; kernel]
//	  │     ─► d<i> = "a|1"; the gang runs on
//	  ├─ the last member's success [kernel] ─► succeeded
//	  └─ any member's failure, timeout, requeue or hand-over, a lost or
//	     leaving worker [workers, controller; kernel] ─► queued at a+1
//	     (the whole gang, counted once) or failed; every other member's
//	     worker finds the attempt moved on at its next beat and stops it
//
// # A member
//
// One delivery of member i on one worker, as Member.Join drives it:
//
//	delivered ─ClaimMember─► claimed ──Barrier: started──► started
//	  │ stale: ErrStale        │ (polled every Poll)        (Join returns)
//	  │ fenced: ErrFenced      │
//	  ▼                        ├─ Barrier: moved ─────────► gave up, ErrStale
//	not claimed                ├─ worker draining ────────► gave up, ErrDraining
//	                           ├─ ctx done (stopping) ────► gave up, ctx.Err()
//	                           ├─ past StartTimeout, Held ─► claimed: the rest
//	                           │    is on its way; asks Held again every 2 s
//	                           └─ past StartTimeout, not Held
//	                                ─► gave up, ErrTimeout
//
// "Gave up" is Abandon, retried briefly on a context of its own: while the
// gang still assembles at a it moves it to a+1 (unplaced), else it only
// takes the job out of this worker's running set. A started member is the
// worker's to run and end (the kernel's FinishMember and
// RequestGangHandOver above).
//
// # What fences what
//
//   - The attempt number fences every step: a claim of an attempt that
//     moved on is stale, an Abandon of an attempt that started or moved on
//     moves nothing, and the barrier reads a moved attempt as Moved.
//   - A claim is fenced like the kernel's claim: a worker identity the
//     controller declared dead (tombstone) or taken over by another
//     incarnation cannot claim (queues.ErrFenced). The placement must name
//     the worker for member i. A replayed claim of the same incarnation
//     gets the record again and counts no second run.
//   - A running gang is fenced on membership (m<i> at its attempt) in the
//     kernel's scripts: only a worker holding a member may end or requeue
//     it, and it leaves every member's running set at once.
//
// The package is apart from the kernel so that the protocol a member
// follows, its scripts and its waiting, is read in one place, and the
// worker holds no step of it.
package gangs
