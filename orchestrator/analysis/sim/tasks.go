package sim

import (
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// taskState is where a task is in its life.
type taskState uint8

const (
	tsFree    taskState = iota // the slot of the task array is unused
	tsQueued                   // waiting in a queue
	tsRunning                  // running on a worker
	tsLeaving                  // stopped by the policy, winding down on its worker
)

// stopReason is why a running task was stopped.
type stopReason uint8

const (
	stopNone stopReason = iota
	stopReclaim
	stopMigrate
	stopSpot
	// stopLost: the task's fixed worker died and was declared dead.
	stopLost
	// stopRepack: rule 5 empties its elastic worker (Action Repack).
	stopRepack
)

// task is one slot of a trace job: a job with Slots n runs as n one-slot
// tasks of the job's Duration, which is how the policy counts work. Task
// records are recycled once finished, so their number follows the work in
// flight, not the trace; a task's ID names its record, which is enough
// since Decide only compares IDs within one snapshot.
type task struct {
	id        string
	submit    time.Duration
	queuedAt  time.Duration
	startedAt time.Duration
	// saved is the work the next attempt resumes from.
	saved time.Duration
	// prevCkpt is the last checkpoint written before the current attempt,
	// -1 if none.
	prevCkpt time.Duration
	// stopAt is when a leaving task was stopped.
	stopAt time.Duration
	job    int32
	tmpl   int32
	worker int32
	// slots is what the task holds on its worker: 1, or the job's slots
	// for a sized task. placed is the worker a queued sized task is
	// placed on (rule 8), -1 if none.
	slots  int32
	placed int32
	// placedAt is when a placed task was placed.
	placedAt time.Duration
	// replicas is the number of members, 1 unless a gang. members is
	// the worker of each member of a gang placed or running; gws are
	// its distinct workers, gk the slots it holds on each and gpos its
	// index in each one's tasks.
	replicas int32
	members  []int32
	gws      []int32
	gk       []int32
	gpos     []int32
	// req are the labels every worker of the task must carry (the trace
	// job's Requires, shared with it), nil for none: a task that has any
	// is sized, since only rule 8 chooses workers by label.
	req    map[string]string
	ovPool int32 // target pool of an overflowed core task
	// share is the thousandths of one GPU the task uses (trace
	// Job.Share), 0 for whole slots; room is the index of the shared slot
	// it runs on in its worker's rooms.
	share int16
	room  int16
	// cpus and mem are what each member needs of its worker beyond its
	// slots, kept only when some pool declares what its workers offer
	// (see Options.Pools); a task with either is sized, as live.
	cpus float64
	mem  int64
	wpos int32 // index in its worker's tasks
	gen  uint32
	// spotHits counts spot reclaims the task suffered.
	spotHits int32
	state    taskState
	queue    queueKind // the queue it waits in, or was taken from
	dest     queueKind // where a leaving task is requeued
	stopped  stopReason
	spotOK   bool // queued in the spot-eligible half of burst
	core     bool
	ckpt     bool
	started  bool // has started at least once
	// readmitted: stopped and requeued after it was admitted, so its
	// queue serves it before every task never taken, as live
	// (policy.Job.Readmitted).
	readmitted bool
	shown      bool // in the policy's index
	// team is the trace job's team (whose share it uses under team
	// shares), grace how long it keeps its slots once the policy stops
	// it, and rebalanced how often rule 9's rebalancing stopped it.
	team       string
	grace      time.Duration
	rebalanced int32
	// halted: its worker (a member's, for a gang) died at haltAt; it
	// makes no progress and waits for the death to be detected.
	halted bool
	haltAt time.Duration
	// recovered: queued again because its worker died, and not started
	// since (under team shares a core job waits in held again).
	recovered bool
	// inShare: under team shares, the team's demand was within its share
	// when the job arrived, so its wait is an owner's in-share wait.
	inShare bool
}

func (s *sim) newTask(ji, tmpl int32, j *trace.Job) int32 {
	var ti int32
	if n := len(s.freeTasks); n > 0 {
		ti = s.freeTasks[n-1]
		s.freeTasks = s.freeTasks[:n-1]
	} else {
		ti = int32(len(s.tasks))
		s.tasks = append(s.tasks, task{id: indexID('j', ti)})
	}
	t := &s.tasks[ti]
	*t = task{
		id: t.id, submit: j.Submit, prevCkpt: -1, job: ji, tmpl: tmpl, worker: -1, ovPool: -1,
		slots: int32(max(j.Slots, 1)), placed: -1, replicas: int32(j.Members()),
		gen: t.gen + 1, core: j.Class == jobs.ClassCore, ckpt: j.Checkpointable,
	}
	if len(j.Requires) > 0 {
		t.req = j.Requires
	}
	t.share = int16(j.Share)
	t.team, t.grace = j.Team, j.Grace
	if s.cpusDeclared {
		t.cpus = j.CPUs
	}
	if s.memDeclared {
		t.mem = j.Memory
	}
	return ti
}

// validEntry reports whether a queue entry still stands for its task.
func (s *sim) validEntry(e queueEntry) bool {
	t := &s.tasks[e.task]
	return t.gen == e.gen && t.state == tsQueued
}

// spotEligible is the policy's rule for spot work: a burst job that
// resumes from a checkpoint, may run again (every trace job may) and has
// not been reclaimed too often.
func (s *sim) spotEligible(t *task) bool {
	return !t.core && t.ckpt && int(t.spotHits) < s.cfg.MaxSpotPreemptions
}

func (s *sim) queueOf(t *task) *taskQueue {
	switch t.queue {
	case qCore:
		return &s.core
	case qLoan:
		return &s.loan
	case qOverflow:
		return &s.pools[t.ovPool].overflow
	case qHeld:
		return &s.held
	}
	if t.spotOK {
		return &s.burstSpot
	}
	return &s.burstOther
}

// enqueue puts a task in queue q as queued at queuedAt (a move between
// queues keeps the attempt's queue time).
//
// A sized task is in no queue workers read: its queue is the policy's
// logical one, and it starts only where a Place puts it.
func (s *sim) enqueue(ti int32, q queueKind, queuedAt time.Duration) {
	t := &s.tasks[ti]
	t.state, t.queue, t.queuedAt = tsQueued, q, queuedAt
	t.gen++
	if q == qBurst {
		t.spotOK = s.spotEligible(t)
	}
	if !t.sized() {
		s.queueOf(t).add(queueEntry{queuedAt: queuedAt, submit: t.submit, task: ti, gen: t.gen, readmitted: t.readmitted})
	}
	if (q == qCore || q == qHeld) && s.cfg.CoreOverflow {
		s.coreDue.push(queueEntry{queuedAt: queuedAt + s.coreMaxWait(t), task: ti, gen: t.gen})
	}
	s.refresh(ti)
	s.dirty = true
}

// dequeue takes a queued task out of its queue.
func (s *sim) dequeue(ti int32) {
	t := &s.tasks[ti]
	t.gen++
	if !t.sized() {
		s.queueOf(t).left(s.valid)
	}
}

// sized reports whether the task holds more than one slot or requires
// labels: it then starts only through the policy's Place, as the policy's
// Job.sized says of its record.
func (t *task) sized() bool {
	return t.slots > 1 || t.gang() || t.req != nil || t.cpus > 0 || t.mem > 0
}

// gang reports whether the task is a gang of several members: it starts,
// stops and ends on all its members' workers at once.
func (t *task) gang() bool { return t.replicas > 1 }

// total is the slots the task holds when running: every member's.
func (t *task) total() int32 { return t.slots * t.replicas }

// gpus is what the task uses with every member running: its slots, or
// its share of one.
func (t *task) gpus() float64 { return jobs.SlotsUsed(int(t.total()), int(t.share)) }

// slotsOn is the slots the running or placed task holds on worker wi.
func (t *task) slotsOn(wi int32) int32 {
	if !t.gang() {
		if t.worker == wi || t.placed == wi {
			return t.slots
		}
		return 0
	}
	for i, w := range t.gws {
		if w == wi {
			return t.gk[i]
		}
	}
	return 0
}

// setMembers records the workers of a gang's members.
func (t *task) setMembers(ws []int32) {
	t.members = ws
	t.gws, t.gk = t.gws[:0], t.gk[:0]
	for _, wi := range ws {
		if i := slices.Index(t.gws, wi); i >= 0 {
			t.gk[i] += t.slots
			continue
		}
		t.gws = append(t.gws, wi)
		t.gk = append(t.gk, t.slots)
	}
	t.gpos = make([]int32, len(t.gws))
}

// clearMembers forgets where a gang was placed.
func (t *task) clearMembers() {
	t.members, t.gws, t.gk, t.gpos = nil, nil, nil, nil
}

// move moves a queued task to another queue, keeping its queue time, and
// lets a free slot take it.
func (s *sim) move(ti int32, q queueKind) {
	s.dequeue(ti)
	s.enqueue(ti, q, s.tasks[ti].queuedAt)
	s.place(ti)
}

// start runs a queued task on worker wi from now on.
func (s *sim) start(ti, wi int32) {
	s.dequeue(ti)
	t := &s.tasks[ti]
	t.state, t.worker, t.startedAt, t.placed = tsRunning, wi, s.now, -1
	t.recovered = false
	if t.gang() {
		for i, wj := range t.gws {
			t.gpos[i] = s.put(wj, ti, t.gk[i])
		}
	} else {
		s.occupy(wi, ti)
	}
	s.events.push(event{at: s.now + s.tr.Jobs[t.job].Duration - t.saved, kind: evFinish, idx: ti, gen: t.gen})
	s.nextCheckpoint(ti)
	if !t.started {
		t.started = true
		if s.teams != nil {
			s.teams.started(t, s.now-t.submit)
		}
		if s.jobUnstarted[t.job]--; s.jobUnstarted[t.job] == 0 {
			s.pools[s.workers[wi].pool].waits.add(t.core, s.now-t.submit)
			s.bound.started(t.job, s.now-t.submit)
		}
	}
	s.refresh(ti)
	s.dirty = true
}

// finish ends a task that has done all its work.
func (s *sim) finish(ti int32) {
	t := &s.tasks[ti]
	wi := t.worker
	s.account(t, s.now)
	s.workLeft--
	if s.jobLeft[t.job]--; s.jobLeft[t.job] == 0 {
		j := &s.tr.Jobs[t.job]
		s.st.jobDone(j.Deadline > 0 && s.now-j.Submit > j.Deadline)
	}
	t.state = tsFree
	t.gen++
	s.refresh(ti)
	s.freeTasks = append(s.freeTasks, ti)
	if t.gang() {
		s.vacateGang(ti)
		return
	}
	s.vacate(wi, ti)
}

// checkpoint returns the work saved and the time of the last checkpoint if
// the running task stopped now. A checkpointable task checkpoints every
// CheckpointInterval of its attempt (continuously when that is zero); any
// other task keeps nothing.
func (s *sim) checkpoint(t *task) (saved, at time.Duration) {
	if !t.ckpt {
		return 0, -1
	}
	ran := s.ranTo(t) - t.startedAt
	if s.ckptEvery == 0 {
		return t.saved + ran, s.now
	}
	k := ran / s.ckptEvery
	if k == 0 {
		return t.saved, t.prevCkpt
	}
	return t.saved + k*s.ckptEvery, t.startedAt + k*s.ckptEvery
}

// stop interrupts a running task for reason and sends it to dest. It
// loses the work since its last checkpoint. A checkpointable task stopped
// by the policy keeps its slot for CheckpointOverhead, visible to the
// policy as the move in flight, before it is requeued; anything else is
// requeued at once (a spot reclaim gives no time to wind down).
func (s *sim) stop(ti int32, reason stopReason, dest queueKind) {
	t := &s.tasks[ti]
	saved, at := s.checkpoint(t)
	lost := time.Duration(t.gpus() * float64(t.saved+(s.ranTo(t)-t.startedAt)-saved))
	s.st.stopped(reason, lost)
	if s.teams != nil {
		s.teams.stopped(t, reason, lost)
	}
	t.saved, t.prevCkpt = saved, at
	if reason == stopSpot {
		t.spotHits++
	}
	if t.halted && reason != stopSpot && reason != stopLost {
		// The policy stops a job of a dead worker it does not know is
		// dead: the request waits, as live, until the death is
		// detected, and the job then goes where the policy asked.
		t.state, t.stopped, t.dest, t.stopAt = tsLeaving, reason, dest, s.now
		t.gen++
		s.refresh(ti)
		s.dirty = true
		return
	}
	if wind := s.windDown(t); reason != stopSpot && reason != stopLost && wind > 0 {
		t.state, t.stopped, t.dest, t.stopAt = tsLeaving, reason, dest, s.now
		t.gen++
		s.events.push(event{at: s.now + wind, kind: evLand, idx: ti, gen: t.gen})
		s.refresh(ti)
		s.dirty = true
		return
	}
	t.stopAt = s.now
	s.land(ti, dest)
}

// ranTo is when the running task last made progress: now, or when its
// worker died.
func (s *sim) ranTo(t *task) time.Duration {
	if t.halted {
		return t.haltAt
	}
	return s.now
}

// windDown is how long a task the policy stops keeps its slots: its own
// grace when it has one, as a live worker gives a job told to stop its
// grace to checkpoint and exit (the model takes all of it, the worst
// case an owner waits for), else CheckpointOverhead if it checkpoints.
func (s *sim) windDown(t *task) time.Duration {
	switch {
	case t.grace > 0:
		return t.grace
	case t.ckpt:
		return s.ckptCost
	}
	return 0
}

// land completes a stop: the slot is freed and the task requeued to dest
// as a new attempt, readmitted: ahead of the tasks never taken.
func (s *sim) land(ti int32, dest queueKind) {
	t := &s.tasks[ti]
	wi := t.worker
	s.account(t, s.now)
	s.st.overhead += t.gpus() * (s.now - t.stopAt).Hours()
	t.stopped, t.halted = stopNone, false
	if t.gang() {
		// Every member's slots free at once; the gang waits for a new
		// Place.
		s.vacateGang(ti)
		t.worker = -1
	} else {
		t.worker = -1
		s.vacate(wi, ti)
	}
	t.readmitted = true
	s.enqueue(ti, dest, s.now)
	s.place(ti)
}

// visible reports whether the snapshot shows the task. Core tasks running
// on the quota are left out and counted in the fixed worker's Busy only:
// no rule ever moves core work off its quota, so Decide has nothing to do
// with them individually, and leaving them out keeps its input to the work
// it may act on. Under team shares every task is shown: rule 9 counts each
// team's use of the quota job by job and may reclaim core loans.
func (s *sim) visible(t *task) bool {
	switch t.state {
	case tsQueued:
		return true
	case tsRunning, tsLeaving:
		return s.fullSnapshot || s.teams != nil || !t.core || s.pools[s.workers[t.worker].pool].Kind != policy.PoolFixed
	}
	return false
}

// refresh brings the policy's record of a task up to date after a
// change: it adds, rewrites or removes it.
func (s *sim) refresh(ti int32) {
	t := &s.tasks[ti]
	switch want := s.visible(t); {
	case want:
		s.ix.PutJob(s.policyJob(t))
		t.shown = true
	case t.shown:
		s.ix.RemoveJob(t.id)
		t.shown = false
	}
}

// nextCheckpoint schedules the next checkpoint of a running task, if it
// writes one before it finishes.
func (s *sim) nextCheckpoint(ti int32) {
	t := &s.tasks[ti]
	if !t.ckpt || s.ckptEvery == 0 {
		return
	}
	next := t.startedAt + ((s.now-t.startedAt)/s.ckptEvery+1)*s.ckptEvery
	if next < t.startedAt+s.tr.Jobs[t.job].Duration-t.saved {
		s.events.push(event{at: next, kind: evCheckpoint, idx: ti, gen: t.gen})
	}
}

// indexID formats an index as a fixed-width ID, so IDs sort like indexes.
func indexID(prefix byte, i int32) string {
	var b [11]byte
	b[0] = prefix
	for k := len(b) - 1; k > 0; k-- {
		b[k] = byte('0' + i%10)
		i /= 10
	}
	return string(b[:])
}

// parseID is indexID's inverse; -1 for anything it did not make.
func parseID(prefix byte, id string) int32 {
	if len(id) != 11 || id[0] != prefix {
		return -1
	}
	var n int32
	for _, c := range []byte(id[1:]) {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int32(c-'0')
	}
	return n
}
