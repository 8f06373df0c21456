// Package sim replays a job trace through Ballast's scheduling policy in
// virtual time and measures what it costs and how long work waits. It is a
// deterministic discrete-event simulator around the same pure function the
// live controller calls, [policy.Decide]: the model keeps the policy's
// view of itself, a [policy.Index], up to date as tasks and workers change,
// and each controller tick decides from it and carries the plan out in the
// model. [Run] simulates one configuration; [AllFixed], [AllElastic]
// and [Hybrid] derive the usual strategies from one set of [Options], and
// [Compare] runs several side by side.
//
// # The model and its simplifications
//
// Jobs. A job of one slot is one task. A job that shares a GPU (trace
// Job.Share, thousandths of one) packs onto a slot that shares hold
// already, the fullest with room first, as a GPU worker packs gpu_share
// jobs, or opens a free slot: a slot holding any share is one busy slot
// to the policy, and a worker whose slots are all busy still takes a
// share that fits, until the first job that does not fit. Shares are
// counted at their part of the GPU in slot-hours and lost work. A job of k > 1 slots is one sized
// task holding k slots on one worker, as live: it waits in no queue a
// worker reads, and starts only where the policy's Place (rule 8) puts
// it, once that worker has k free slots; until then the worker holds its
// slots for it as they free and takes no other work (a reservation).
// A gang (Replicas n > 1) is one task of n members of k slots: one Place
// names each member's worker (a worker named twice holds 2k), every one
// of them holds the gang's slots, and the members start at the same
// instant once all have them free. Anything that stops one member (a spot
// reclaim of its worker, a Reclaim, Migrate) stops the gang, freeing every
// member's slots at once; its slot-hours and lost work count n x k slots,
// in its members' workers' pools. Waits are submit to start, and requeues after a stop do not
// add to them. Every job may be retried, so a checkpointable burst job is
// spot-eligible until it has suffered Config.MaxSpotPreemptions spot
// reclaims. Jobs are not pinned to regions; the trace's Team
// matters only under team shares (below). A job's CPUs and Memory bind only when some pool declares what its
// workers offer (Pool.CPUs, Pool.Memory): the job is then sized, and rule
// 8 places its members only where a worker holds them, as live; with no
// pool declaring them it is placed as if it asked for none, since live a
// worker that reports none holds any (fixed workers report none here).
//
// Labels and flavors. A job's Requires (gpu_model: A100, say) make it a
// sized job, as live: it waits in no queue workers read and runs only
// where rule 8 places it, on a worker whose pool's Labels hold every label
// it requires (workers carry their pool's labels, as a live worker reports
// those of its config); a Place elsewhere is an error of the run, not a
// start. Scale-up launches a pool for it only when the pool's labels and
// machine size (SlotsPerWorker) fit it, so a model's burst work grows its
// own pools, and a job bigger than every machine of its model's elastic
// pools waits for its model's quota. Fleets that buy quota per model give
// each fixed pool its slots (Options.FixedSlotsByPool); each is then a
// quota of its own, cut into machines of its pool's SlotsPerWorker,
// labelled, priced and reported apart (Result.Pools), with the waits of
// the jobs that first started on it. Jobs that require no label run on
// any worker, as before.
//
// Queues and workers. Core jobs queue in core, burst jobs in burst, as in
// production. The quota is always-up fixed workers: one of FixedSlots
// slots, or, with Options.FixedWorkerSlots, workers of that size (a
// k-slot job then needs k free on one of them), or with FixedSlotsByPool
// each fixed pool's machines, pool by pool in Options order. They take
// core work, then loaned work (strict priority), the first worker by ID
// first, whatever their pool: one-slot work that requires no label may
// run on any model, as live. On-demand
// workers take the core work overflowed to their pool (live, any
// on-demand worker of the job's region may take it from the overflow
// queue), then burst work; spot workers only spot-eligible burst work.
// A worker with a free slot takes queued one-slot work at once (the live
// system takes about 20 ms), in the policy's queue order; a newly queued
// burst task goes to the cheapest pool with a free slot and, within it, to
// the oldest worker, so the newest workers are the ones that go idle. A
// sized job never fits an elastic worker smaller than itself, so a pool of
// one-slot workers runs none.
//
// Core overflow (rule 7) waits as live: the global core_max_wait, a
// template's own (Options.CoreMaxWaitByTemplate), and for a core job with
// a deadline no later than its latest start, the deadline less its
// duration less the on-demand lead (slowest start-up plus two ticks). Live,
// a pipeline step's duration is the p90 of its past runs; here it is known.
//
// Team shares. With Options.Config.Shares on, jobs carry their trace
// Team and Grace to the policy, and core jobs arrive in the held queue,
// which no worker reads, until rule 9 admits them to core (burst work
// reaches the quota only through rule 2's lend, even without elastic
// pools); the snapshot then shows core work on the quota too, since rule
// 9 counts it job by job. A reclaimed core loan goes back to held,
// readmitted, a burst one to burst. The run keeps each team's use of the
// quota decayed over the shares' half-life (shares.Decayed) and hands it
// to the policy before every Decide; with rebalancing on, a running job's
// MinRun is a timer the run wakes for. Result.Teams reports each team's
// in-share waits (of the jobs that arrived while the team's demand on the
// quota, with them, was within its share), reclaims and lost work. Shares
// off, none of this runs.
//
// Ticks. Decide runs on tick boundaries (multiples of Options.Tick from
// the trace start), after every event at that instant. It is skipped on a
// tick when nothing in the model changed since the last snapshot and no
// timer that the policy reads can have crossed its threshold (an idle
// worker's IdleTTL and paid time within ReleaseMargin, a launch unfilled
// for SpotFallbackAfter, a core job queued for CoreMaxWait). Decide is
// pure, so this is exact, not an approximation; a test checks that
// deciding on every tick gives the same Result.
//
// The policy's view. It holds every queued task, every task on elastic
// capacity and every burst task on the quota. Core tasks running on the
// quota are left out and counted in the fixed worker's Busy, which the
// policy reads the same way: no rule moves core work off its quota, and
// leaving them out keeps Decide's input, and so the run time, to the work
// it may act on. A test checks that showing them changes nothing.
//
// Carrying out a plan. The model records in-flight moves itself, the state
// policy.Apply describes, rather than calling Apply on a snapshot it would
// then throw away. Lend, unlend and overflow land at once, as a Redis move
// does. A scale-up books a launch that becomes registered, idle workers
// after the pool's StartupDelay: launches always fill (no stock-outs), and
// the policy's "starting" worker state is not modelled, the launch book
// stands for it. Drain stops a worker taking work; release removes it.
// A place holds a sized job's slots on the worker it names (it starts
// when they free); a drain, release or spot reclaim of that worker sends
// it back to wait for another placement (a gang leaves every member's
// worker). A rehome (moving queued burst
// work between the controller's elastic queues) is a no-op: the model has one burst queue whose spot workers skip
// work that may not go to spot, and no region pins, so its snapshot gives
// jobs no policy.ElasticHome and the policy plans none.
//
// Stops. A reclaim or migration stops a running task; it resumes from its
// last checkpoint, so the work since then is lost (LostWork), the same
// measure Decide uses to pick victims. A checkpointable task checkpoints
// every CheckpointInterval of its attempt, at no cost (that is inside its
// Duration); with a zero interval it loses nothing. A task stopped by the
// policy keeps its slot for its Grace (trace Job.Grace, all of it: the
// worst case an owner waits for), or without one, if checkpointable, for
// CheckpointOverhead, while it winds down, visible to the policy as the
// move in flight, then is requeued; a task with neither hands its slot
// over at once. A task that cannot checkpoint restarts from zero. A requeued task is queued anew at the time it lands.
//
// Spot. Each spot worker is reclaimed after an exponential lifetime
// (a Poisson process of rate SpotReclaimRate per worker-hour) from its
// boot, drawn from a PCG generator seeded by Options.Seed, the only
// randomness of a run. A reclaim gives no notice: the worker's tasks stop
// at once, lose their work since the last checkpoint (all of it if they
// cannot checkpoint) and are requeued to burst with one more spot
// preemption.
//
// Fixed worker deaths. Options.FixedDeaths lists deaths (a fixed worker
// by its index in ID order, when it dies, how long it is down), or
// Options.FixedDeathRate makes them a Poisson process per fixed worker
// (drawn from a generator of their own seeded by Options.Seed, so the
// spot reclaims stay as they were), each down FixedDowntime. As live, a
// death goes in three steps. The worker stops: it takes no work and its
// jobs make no progress, but its heartbeat is all the controller has, so
// for Options.WorkerTTL (the controller's default worker_ttl when zero)
// the policy still sees it up with its jobs running, and may place work
// on it or stop its jobs; such a stop waits with the dead job. Then the
// controller declares it dead: its slots leave the fixed capacity the
// policy sees (under team shares the quota Split divides), what was
// placed on it waits for another place, and its jobs are requeued
// readmitted, at the head of the queue they were taken from (a job the
// policy was stopping to the queue it asked for), resuming from their
// last checkpoint before the death; the work since is lost
// (Preemptions.Lost, LostWork). Last, Down after the death (or at its
// detection if later), it registers again with every slot free. A death
// once every job is done is ignored, and so is one drawn from the rate
// when nothing but deaths is left to happen (work stuck for good would
// otherwise keep the run going). Under team shares a requeued core job
// goes back to held, readmitted, to wait for rule 9's admission first in
// line, as live. The quota is
// billed whole whatever is down, as a prepaid quota is. With no deaths
// none of this runs.
//
// Money. Each fixed pool's quota costs its slots × its price × span
// whatever its use (FixedSlots × price × span with one quota), the
// span running from the trace start to the last thing that happened (a
// job event, a worker boot or reclaim, or a tick that acted, such as the
// last release). An elastic worker is billed from its launch request, as
// providers bill the boot, until its release or reclaim, rounded the way
// policy.Pool.PaidUntil rounds (billing unit and MinBilling); workers never
// released are billed to the end of the run. Per-slot prices are
// multiplied by the pool's SlotsPerWorker.
//
// Time and order. A zero trace Start is read as 2000-01-01 UTC, because
// the policy takes a zero time for "unknown". At one instant, worker and
// job events come before arrivals (a slot freed as a job arrives is free
// for it), and both before the tick. Nothing iterates a map to decide, so
// a trace and Options always give the same Result.
//
// Performance. The model keeps only work in flight (task records are
// recycled). The index is changed where the model changes (a task queued,
// started, stopped or finished, a worker booted, drained or retired, a
// checkpoint written, which is an event of its own), so a tick costs what
// changed and what its rules read (queue heads, the workers, the victims
// of a move), not a walk over every job in flight; a test holds the index
// against a rebuild from the model before every Decide. What still grows
// with the load: placing a burst backlog on pools that have room, and the
// workers (a pass over them per tick), so an overloaded configuration with
// a long burst queue and room to grow is slower to simulate.
package sim
