package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/ballastdev/ballast/orchestrator/control/provider"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/shares"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/queues/usage"
)

// WorkerControl reaches a worker directly. A preemption or drain is already
// recorded in Redis when Preempted or Drain is called, and a worker that
// misses the wake-up acts at its next heartbeat.
// workers.NATSControl implements it.
type WorkerControl interface {
	// Preempted wakes the worker running attempt of job to act on its
	// preempt request now.
	Preempted(ctx context.Context, workerID, jobID string, attempt int)
	// Drain wakes a worker to act on the drain recorded for it
	// (registry.Store.RequestDrain): it takes no more work, its running jobs
	// finish where they are, and it is released once empty.
	Drain(ctx context.Context, workerID string)
}

// Hybrid is the adapter around the pure capacity policy: each leader tick it
// brings its view of the job records, the worker registry and the provider
// up to date (reading only what changed, see liveState), decides from the
// policy's index, and applies the plan. Every action is fenced
// (moves carry the attempt they were planned for), so applying a plan twice
// or racing a worker changes nothing twice.
type Hybrid struct {
	Store HybridStore
	// Launches is the book of elastic launches not yet registered
	// (usage.Store keeps it with the cost records). It is apart from Store
	// because the accounting is a store of its own; with a Provider it is
	// needed, and nil makes every launch a logged error.
	Launches LaunchBook
	// Registry is the worker registry; nil means the registry of Store's
	// namespace, when Store is a kernel (the Redis store is).
	Registry WorkerBook
	Provider provider.Provider // nil: elastic capacity is not managed (no launches)
	Pools    []policy.Pool
	Config   policy.Config
	Events   events.Publisher
	// Control reaches workers directly (nil: preemptions wait for the
	// worker's heartbeat, and a drain is done by the provider's release).
	Control WorkerControl
	Logger  *slog.Logger

	mu        sync.Mutex
	idleSince map[string]time.Time         // worker → when it was first seen idle
	inflight  map[string]inflight          // job → a preemption asked for and not yet done
	attempts  map[string]int               // job → attempt seen in the last snapshot
	seen      map[string]jobs.Job          // job → record seen in the last snapshot
	launched  map[string]provider.Instance // instance ID → launch, until it registers
	lastPlan  policy.Plan
	// overflowTo remembers, per job overflowed by this controller, the
	// on-demand pool rule 7 sized for it and the attempt it went with; see
	// overflowPool.
	overflowTo map[string]overflowed

	// stockOut holds, per elastic pool, the workers a launch asked for that the
	// provider refused with ErrStockOut. A refused launch returns no
	// instance, so without this book nothing would age into the policy's
	// fallback (spot to on-demand, or another region) and the refused launch
	// would simply be retried every tick.
	stockOut map[string]policy.Launch
	// bookedOut holds the IDs of StockedOut instances already added to
	// stockOut, so a provider that keeps listing one books it once.
	bookedOut map[string]bool
	// noticed holds, per instance, the reclaim time already recorded as a
	// spot notice for its worker.
	noticed map[string]time.Time

	// RebuildEvery is how often Tick reads every active job again rather
	// than only those that changed (0: DefaultRebuildEvery). It bounds how
	// long a change no signal reported stays unseen; see liveState.
	RebuildEvery time.Duration
	// live is the view Tick keeps across ticks; nil until the first tick,
	// and after anything that makes it untrustworthy (see Forget).
	live  *liveState
	hints hintSet

	// Quota is the fixed slots team shares divide (0: the slots of the
	// registered fixed workers).
	Quota int
	// OnShares, if set, receives the share view at every tick with
	// shares on (the metrics' feed).
	OnShares func(ShareView)
	// decayed is each team's fixed usage decayed over the shares'
	// half-life, the policy's tie-break between borrowers; shareView is
	// the shares at the last tick (see Shares). strayHeld are held jobs
	// a rebuild found while shares are off.
	decayed   shares.Decayed
	shareView ShareView
	strayHeld []strayJob
	// rebalanced counts, per job, the reclaims rule 9's rebalancing
	// asked for (Job.Rebalanced); kept in memory, so a new leader
	// starts them over.
	rebalanced map[string]int
}

type inflight struct {
	kind    policy.ActionKind
	attempt int
}

// LastPlan returns the plan of the last tick (for status and tests).
func (h *Hybrid) LastPlan() policy.Plan {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lastPlan
}

// Tick runs one round: bring the view up to date, close the launches the
// provider reports gone, decide, apply. The view and the policy's index are
// kept across ticks, and only the records that may have changed are read
// again (see liveState); some ticks read everything.
func (h *Hybrid) Tick(ctx context.Context, now time.Time) (policy.Plan, error) {
	ix, instances, err := h.tickIndex(ctx, now)
	if err != nil {
		return policy.Plan{}, err
	}
	h.noticeSpot(ctx, instances, now)
	h.tickShares(ix, now)
	return h.act(ctx, ix, instances, now)
}

// act is the rest of Tick, once the view is read: close the launches the
// provider reports gone, decide, apply.
func (h *Hybrid) act(ctx context.Context, ix *policy.Index, instances []provider.Instance, now time.Time) (policy.Plan, error) {
	h.endLaunches(ctx, instances, now)
	h.releaseStrayHeld(ctx)
	plan := ix.Decide(now)
	h.mu.Lock()
	h.lastPlan = plan
	h.mu.Unlock()
	return plan, h.Apply(ctx, plan, now)
}

// Snapshot builds the policy's view of the world from a full read. It only
// reads the store and the provider: what the view implies for the store
// (closing launches that are gone, moving jobs) is Tick's and Apply's, so
// building a view, for status or a test, changes nothing there. It
// replaces what Apply fences on, so the next Tick reads everything again.
func (h *Hybrid) Snapshot(ctx context.Context, now time.Time) (policy.Snapshot, error) {
	s, _, err := h.snapshot(ctx, now)
	return s, err
}

// snapshot is Snapshot with the provider's instances it read.
func (h *Hybrid) snapshot(ctx context.Context, now time.Time) (policy.Snapshot, []provider.Instance, error) {
	h.init()
	ws, err := h.workerBook().Workers(ctx)
	if err != nil {
		return policy.Snapshot{}, nil, err
	}
	active, err := h.Store.ActiveJobs(ctx)
	if err != nil {
		return policy.Snapshot{}, nil, err
	}
	var instances []provider.Instance
	if h.Provider != nil {
		if instances, err = h.Provider.List(ctx); err != nil {
			return policy.Snapshot{}, nil, err
		}
	}

	h.mu.Lock()
	defer h.mu.Unlock()
	// Snapshot's read replaces what Apply fences on, so the state Tick
	// keeps across ticks no longer matches it: the next tick rebuilds.
	h.live = nil
	return h.build(ws, active, instances, now), instances, nil
}

// build is the policy's view of what the store and the provider hold, as
// read; it replaces what Apply fences on (h.seen, h.attempts). Callers
// hold h.mu.
func (h *Hybrid) build(ws []queues.WorkerInfo, active []jobs.Job, instances []provider.Instance, now time.Time) policy.Snapshot {
	s := policy.Snapshot{Config: h.Config, Pools: h.Pools}
	var poolOf map[string]string
	s.Workers, s.Launches, poolOf = h.viewWorkers(ws, runningSlots(active), instances, now)
	attempts := make(map[string]int, len(active))
	seen := make(map[string]jobs.Job, len(active))
	for _, j := range active {
		attempts[j.ID] = j.Attempt
		seen[j.ID] = j
		h.noteStrayHeld(j)
		s.Jobs = append(s.Jobs, h.policyJob(j, poolOf))
	}
	for id := range h.inflight {
		if _, ok := attempts[id]; !ok {
			delete(h.inflight, id)
		}
	}
	for id := range h.rebalanced {
		if _, ok := attempts[id]; !ok {
			delete(h.rebalanced, id)
		}
	}
	for id, o := range h.overflowTo {
		if attempts[id] != o.attempt {
			delete(h.overflowTo, id) // ended, or moved on from its overflow
		}
	}
	h.attempts = attempts
	h.seen = seen
	return s
}

// runningSlots is, by worker, the slots the running jobs' records hold
// there. The job records are fresher than a worker's last heartbeat: a job
// claimed or finished since then already shows there. Trust them for how
// busy a worker is, so a short job still resets its idle clock and a
// just-freed fixed slot can be lent at once. Slots, not jobs: a four-slot
// job fills four.
func runningSlots(active []jobs.Job) map[string]int {
	running := map[string]int{}
	for _, j := range active {
		addRunning(running, j, "")
	}
	return running
}

// addRunning adds what running job j holds to running: on every worker, or
// only on worker when it is not "".
func addRunning(running map[string]int, j jobs.Job, worker string) {
	switch {
	case j.State != jobs.StateRunning || j.Worker == "":
	case len(j.Placed) > 0:
		// Every member of a placed job (a gang's on several
		// workers) holds its slots where it runs.
		for _, w := range j.Placed {
			if worker == "" || w == worker {
				running[w] += j.Spec.SlotCount()
			}
		}
	case worker == "" || j.Worker == worker:
		running[j.Worker] += j.Spec.SlotCount()
	}
}

// viewWorkers is the policy's view of the registered workers, given the
// slots the records hold on each, and of the launches on their way; with
// each worker's pool. Callers hold h.mu.
func (h *Hybrid) viewWorkers(ws []queues.WorkerInfo, running map[string]int, instances []provider.Instance, now time.Time) (
	workers []policy.Worker, launches []policy.Launch, poolOf map[string]string) {
	poolOf = map[string]string{}
	registered := map[string]bool{}
	for _, w := range ws {
		registered[w.ID] = true
		poolOf[w.ID] = w.Pool
		busy := min(running[w.ID], w.Slots)
		pw := policy.Worker{ID: w.ID, Pool: w.Pool, Slots: w.Slots, Busy: busy, State: policy.WorkerUp, StartedAt: w.StartedAt,
			Labels: w.Labels, CPUs: w.CPUs, Memory: w.Memory,
			// A worker that reads another place queue, or none, never
			// starts work placed on it: rule 8 takes such placements back.
			NoPlacedWork: w.PlaceQueue != string(queues.PlaceQueue(w.ID))}
		for _, g := range w.GPUs {
			if g.Share > 0 {
				pw.SharedGPUs = append(pw.SharedGPUs, g.Share)
			}
		}
		if w.Draining {
			pw.State = policy.WorkerDraining
		}
		if busy == 0 {
			if _, ok := h.idleSince[w.ID]; !ok {
				h.idleSince[w.ID] = now
			}
			pw.IdleSince = h.idleSince[w.ID]
		} else {
			delete(h.idleSince, w.ID)
		}
		if inst, ok := h.launched[w.ID]; ok {
			pw.LaunchRequestedAt = inst.LaunchedAt
		}
		workers = append(workers, pw)
	}
	// Launches not yet registered count as capacity on its way, so the same
	// backlog is not launched for twice.
	for _, inst := range instances {
		if registered[inst.ID] || inst.State.Ended() {
			delete(h.launched, inst.ID)
			continue
		}
		launches = append(launches, policy.Launch{Pool: inst.Pool, Count: 1, RequestedAt: inst.LaunchedAt})
	}
	// Stocked-out spot launches count as unfilled launches dated from the
	// first refusal: once SpotFallbackAfter old, the policy sends the work
	// on-demand (rule 3). After twice that the controller gives up on them,
	// so spot is asked again for work still waiting.
	for pool, l := range h.stockOut {
		if now.Sub(l.RequestedAt) >= 2*h.Config.SpotFallbackAfter {
			delete(h.stockOut, pool)
			continue
		}
		launches = append(launches, l)
	}
	sort.Slice(workers, func(i, k int) bool { return workers[i].ID < workers[k].ID })
	for id := range h.idleSince {
		if !registered[id] {
			delete(h.idleSince, id)
		}
	}
	return workers, launches, poolOf
}

// policyJob is the policy's view of one active job record. It drops the
// in-flight preemption the record shows done. Callers hold h.mu.
func (h *Hybrid) policyJob(j jobs.Job, poolOf map[string]string) policy.Job {
	q := policy.Queue(j.Queue)
	switch jq := queues.Queue(j.Queue); {
	case jq.Overflow():
		// Overflowed core work, regional or not, is its own backlog:
		// on-demand demand the policy sizes for, never burst.
		q = policy.QueueOverflow
	case jq.Elastic():
		// The policy sees one elastic backlog: ondemand and the
		// regional queues are burst to it, and it reads the pin
		// from the job's region, not from the queue name.
		q = policy.QueueBurst
	}
	pj := policy.Job{ID: j.ID, Class: j.Spec.Class, State: j.State, Queue: q, Worker: j.Worker,
		Pool: poolOf[j.Worker], Checkpointable: j.Spec.Checkpointable, Retryable: j.Spec.Retryable,
		SpotPreemptions: j.SpotPreemptions, Region: j.Spec.Labels[RegionLabel], SubmittedAt: j.CreatedAt,
		QueuedAt: j.QueuedAt, Readmitted: j.Readmitted, StartedAt: j.StartedAt, LastCheckpointAt: j.CheckpointAt,
		Team: j.Spec.Team, Grace: j.Spec.Grace.Std(), Rebalanced: h.rebalanced[j.ID], NotBefore: j.NotBefore}
	pj.MaxWait, pj.HasMaxWait = j.Spec.OwnMaxWait(j.QueuedAt, h.Config.CoreMaxWait)
	if f, ok := h.inflight[j.ID]; ok {
		if f.attempt == j.Attempt && j.State == jobs.StateRunning {
			pj.PendingAction = f.kind
		} else {
			delete(h.inflight, j.ID) // done: the attempt moved on
		}
	}
	pj.Home = elasticHome(j)
	size(&pj, j)
	if j.State == jobs.StateQueued && q == policy.QueueOverflow {
		// After size: the pool must hold the job's shape.
		pj.Pool = h.overflowPool(j, &pj)
	}
	return pj
}

// elasticHome is which of the elastic queues a queued burst job waits in,
// so the policy can re-home it (rule 3). A pin to a malformed region has no
// queue (Submit refuses it; a job queued before pins were enforced may
// have one): its home is left unknown, and it stays where it is.
func elasticHome(j jobs.Job) policy.ElasticHome {
	cur, pin := queues.Queue(j.Queue), j.Spec.Labels[RegionLabel]
	if j.State != jobs.StateQueued || j.Spec.Class != jobs.ClassBurst || !cur.Elastic() || (pin != "" && !queues.ValidRegion(pin)) {
		return policy.ElasticHome{}
	}
	return policy.ElasticHome{Known: true, OnDemand: cur.Base() == queues.QueueOnDemand, Region: cur.Region()}
}

// RegionLabel is the job label that pins a job to a region.
const RegionLabel = jobs.RegionLabel

// Apply carries out a plan. Errors of single actions are logged and the rest
// of the plan still runs: the next tick plans again from the new state.
func (h *Hybrid) Apply(ctx context.Context, plan policy.Plan, now time.Time) error {
	h.init()
	var firstErr error
	note := func(a policy.Action, err error) {
		if err == nil {
			return
		}
		h.Logger.Warn("plan action failed", "action", a.String(), "err", err)
		if firstErr == nil {
			firstErr = err
		}
	}
	for _, a := range plan.Actions {
		h.Logger.Info("plan", "action", a.String())
		if a.Job != "" {
			h.Changed(a.Job) // read again next tick, whatever the action did
		}
		switch a.Kind {
		case policy.Lend, policy.Unlend:
			to := queues.QueueLoan
			if a.Kind == policy.Unlend {
				to = h.elasticQueue(a.Job)
			}
			n, err := h.Store.Move(ctx, a.Job, h.attempt(a.Job), to, a.Reason)
			h.announceMove(a, n, to)
			note(a, err)
		case policy.Rehome:
			// Fenced like every move: a job that started, or moved
			// since the snapshot, keeps its new attempt.
			base := queues.QueueBurst
			if a.Home.OnDemand {
				base = queues.QueueOnDemand
			}
			to := queues.RegionalQueue(base, a.Home.Region)
			n, err := h.Store.Move(ctx, a.Job, h.attempt(a.Job), to, a.Reason)
			h.announceMove(a, n, to)
			note(a, err)
		case policy.Reclaim, policy.Migrate, policy.Repack:
			note(a, h.preempt(ctx, a))
		case policy.ScaleUp:
			note(a, h.launch(ctx, a, now))
		case policy.Drain:
			// Stop taking work and let running jobs finish where they are;
			// Release follows once the worker is empty. The drain is
			// recorded on the worker's registry entry, where its heartbeat
			// reads it; the message only saves waiting for that beat.
			// Without a wake-up channel the provider's release drains it.
			if err := h.workerBook().RequestDrain(ctx, a.Worker); err != nil {
				note(a, err)
			} else if h.Control != nil {
				h.Control.Drain(ctx, a.Worker)
			} else if h.Provider != nil {
				note(a, h.Provider.Release(ctx, a.Worker))
			}
		case policy.Release:
			if h.Provider != nil {
				note(a, h.Provider.Release(ctx, a.Worker))
			}
		case policy.Overflow:
			note(a, h.overflow(ctx, a, now))
		case policy.Place:
			note(a, h.place(ctx, a))
		case policy.Admit:
			note(a, h.admit(ctx, a))
		case policy.Unplace:
			note(a, h.unplace(ctx, a))
		}
	}
	return firstErr
}

// elasticQueue is where a job goes back to elastic capacity: burst while spot
// may take it, else ondemand, in its pinned region's form if it has one.
func (h *Hybrid) elasticQueue(job string) queues.Queue {
	h.mu.Lock()
	j := h.seen[job]
	h.mu.Unlock()
	return ElasticQueue(j.Spec, j.SpotPreemptions, h.Config.MaxSpotPreemptions)
}

func (h *Hybrid) attempt(job string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.attempts[job]
}

// preempt asks the worker running a job to checkpoint it and send it to the
// action's queue.
func (h *Hybrid) preempt(ctx context.Context, a policy.Action) error {
	to := queues.Queue(a.Queue)
	held, toHeld := h.reclaimQueue(a)
	switch {
	case a.Kind == policy.Reclaim && toHeld:
		to = held
	case a.Kind == policy.Reclaim || to.Elastic():
		to = h.elasticQueue(a.Job)
	case to == "":
		to = queues.QueueLoan
	}
	attempt := h.attempt(a.Job)
	ok, err := h.Store.RequestPreempt(ctx, a.Job, attempt, to, fmt.Sprintf("%s (rule %d: %s)", a.Kind, a.Rule, a.Reason))
	if err != nil || !ok {
		return err
	}
	h.mu.Lock()
	h.inflight[a.Job] = inflight{kind: a.Kind, attempt: attempt}
	if a.Rebalance {
		h.rebalanced[a.Job]++
	}
	h.mu.Unlock()
	if a.Kind == policy.Reclaim {
		h.announceReclaim(a, attempt)
	}
	if h.Control != nil {
		h.Control.Preempted(ctx, a.Worker, a.Job, attempt)
	}
	return nil
}

func (h *Hybrid) launch(ctx context.Context, a policy.Action, now time.Time) error {
	if h.Provider == nil {
		return nil
	}
	insts, err := h.Provider.Launch(ctx, a.Pool, a.Count)
	h.recordLaunches(ctx, a.Pool, insts, now)
	h.mu.Lock()
	for _, inst := range insts {
		h.launched[inst.ID] = inst
	}
	// A stock-out is booked as an unfilled launch (see stockOut); with
	// SpotFallbackAfter 0 the policy never falls back, so nothing is booked.
	if unfilled := a.Count - len(insts); unfilled > 0 && errors.Is(err, provider.ErrStockOut) &&
		h.Config.SpotFallbackAfter > 0 && h.poolKind(a.Pool) != policy.PoolFixed {
		l, ok := h.stockOut[a.Pool]
		if !ok {
			l = policy.Launch{Pool: a.Pool, RequestedAt: now}
		}
		l.Count += unfilled
		h.stockOut[a.Pool] = l
	}
	h.mu.Unlock()
	return err
}

// recordLaunches notes the launches in the store, so the cost ledger bills
// each worker from its launch (providers bill the boot) and bills a launch
// that never registers at all.
func (h *Hybrid) recordLaunches(ctx context.Context, pool string, insts []provider.Instance, now time.Time) {
	if len(insts) == 0 {
		return
	}
	slots := 1
	for _, p := range h.Pools {
		if p.Name == pool && p.SlotsPerWorker > 0 {
			slots = p.SlotsPerWorker
		}
	}
	ls := make([]usage.Launch, 0, len(insts))
	for _, inst := range insts {
		at := inst.LaunchedAt
		if at.IsZero() {
			at = now
		}
		ls = append(ls, usage.Launch{ID: inst.ID, Pool: pool, Slots: slots, At: at})
	}
	if err := h.launchBook().RecordLaunches(ctx, ls); err != nil {
		h.Logger.Warn("launches not recorded: their boot is not billed", "err", err)
	}
}

// launchGrace is how long a recorded launch may be missing from the
// provider's list before it counts as gone: the list may have been read
// just before the launch.
const launchGrace = time.Minute

// endLaunches closes the recorded launches whose worker never registered
// and that the provider reports gone or failed, or no longer lists.
func (h *Hybrid) endLaunches(ctx context.Context, instances []provider.Instance, now time.Time) {
	if h.Provider == nil {
		return
	}
	pending, err := h.launchBook().PendingLaunches(ctx)
	if err != nil || len(pending) == 0 {
		return // the next tick tries again
	}
	state := make(map[string]provider.State, len(instances))
	for _, inst := range instances {
		state[inst.ID] = inst.State
	}
	for _, l := range pending {
		st, listed := state[l.ID]
		if (listed && !st.Ended()) || (!listed && now.Sub(l.At) < launchGrace) {
			continue
		}
		if _, err := h.launchBook().EndLaunch(ctx, l.ID, now); err != nil {
			h.Logger.Warn("launch not closed", "instance", l.ID, "err", err)
		}
	}
}

func (h *Hybrid) poolKind(name string) policy.PoolKind {
	for _, p := range h.Pools {
		if p.Name == name {
			return p.Kind
		}
	}
	return ""
}

func (h *Hybrid) init() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.idleSince == nil {
		h.idleSince = map[string]time.Time{}
		h.inflight = map[string]inflight{}
		h.attempts = map[string]int{}
		h.seen = map[string]jobs.Job{}
		h.launched = map[string]provider.Instance{}
		h.stockOut = map[string]policy.Launch{}
		h.bookedOut = map[string]bool{}
		h.noticed = map[string]time.Time{}
		h.overflowTo = map[string]overflowed{}
		h.rebalanced = map[string]int{}
	}
	if h.Logger == nil {
		h.Logger = slog.Default()
	}
}

// announceMove publishes a move that happened (n is the new attempt, 0
// when the fencing refused it), with the rule's reason, so the job's
// history says why an attempt began without running.
func (h *Hybrid) announceMove(a policy.Action, n int, to queues.Queue) {
	if n == 0 {
		return
	}
	verb := map[policy.ActionKind]string{policy.Lend: "lent to fixed capacity", policy.Unlend: "sent back to elastic capacity",
		policy.Rehome: "re-homed", policy.Admit: "admitted to fixed capacity"}[a.Kind]
	reason := fmt.Sprintf("%s (rule %d: %s)", verb, a.Rule, a.Reason)
	// A move of a queued job starts no run: the count stays the record's.
	h.mu.Lock()
	runs := h.seen[a.Job].Runs
	h.mu.Unlock()
	publish(h.Events, h.Logger, events.Event{ID: events.JobEventID(a.Job, n, events.TypeJobMoved), Type: events.TypeJobMoved,
		JobID: a.Job, Attempt: n, Runs: runs, State: jobs.StateQueued, Queue: string(to), Reason: reason, Time: time.Now(),
		Data: shareData(a)})
}

// shareData is the share side of a move under shares (an admission, or a
// lend that borrows), for the event; nil otherwise.
func shareData(a policy.Action) map[string]any {
	if a.Kind != policy.Admit && a.Owner == "" {
		return nil
	}
	return events.Share{Action: string(a.Kind), Team: a.Team, Owner: a.Owner, Rule: a.Rule}.Data()
}

// launchBook is Launches. Without one, the book says so at every use, so
// a missing dependency shows in the log instead of launches going unseen.
func (h *Hybrid) launchBook() LaunchBook {
	if h.Launches != nil {
		return h.Launches
	}
	return noLaunchBook{}
}

// workerBook is Registry, or the registry of Store's namespace when Store
// is a kernel. A store that is neither gets a book that says so at every
// use, as noLaunchBook does.
func (h *Hybrid) workerBook() WorkerBook {
	if h.Registry != nil {
		return h.Registry
	}
	if k, ok := h.Store.(queues.Kernel); ok {
		return registry.New(k)
	}
	return noWorkerBook{}
}

// noWorkerBook refuses every use: no registry was given.
type noWorkerBook struct{}

var errNoWorkerBook = errors.New("controller.Hybrid: no worker registry (set Hybrid.Registry)")

func (noWorkerBook) Workers(context.Context) ([]queues.WorkerInfo, error) {
	return nil, errNoWorkerBook
}
func (noWorkerBook) RequestDrain(context.Context, string) error { return errNoWorkerBook }
func (noWorkerBook) RequestSpotNotice(context.Context, string, time.Time) error {
	return errNoWorkerBook
}

// noLaunchBook refuses every use: no launch book was given.
type noLaunchBook struct{}

var errNoLaunchBook = errors.New("controller.Hybrid: no launch book (set Hybrid.Launches)")

func (noLaunchBook) PendingLaunches(context.Context) ([]usage.Launch, error) {
	return nil, errNoLaunchBook
}
func (noLaunchBook) RecordLaunches(context.Context, []usage.Launch) error { return errNoLaunchBook }
func (noLaunchBook) EndLaunch(context.Context, string, time.Time) (bool, error) {
	return false, errNoLaunchBook
}
