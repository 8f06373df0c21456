package queues

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Defaults of StoreOptions.
const (
	DefaultRetention      = 7 * 24 * time.Hour
	DefaultIdempotencyTTL = 24 * time.Hour
	// infraRetries is how often asynq redelivers the same attempt when the
	// handler fails for an infrastructure reason (Redis gone mid-claim). Job
	// failures never use asynq retries: Ballast retries with a new attempt.
	infraRetries = 25
	// timeoutSlack is added to a job's own timeout for asynq's task deadline:
	// the worker enforces the job's timeout itself (SIGTERM, grace, SIGKILL),
	// and asynq must never cut the handler short before that finishes.
	timeoutSlack = 5 * time.Minute
)

// StoreOptions configures a Store.
type StoreOptions struct {
	// Namespace separates installs sharing one Redis ("" = "ballast").
	Namespace string
	// Retention is how long finished job records and logs are kept.
	Retention time.Duration
	// IdempotencyTTL is how long an idempotency key maps to its job.
	IdempotencyTTL time.Duration
	// Now is the clock (tests inject one); nil means time.Now.
	Now func() time.Time
	// CancelWaker, when set, is told of each cancel recorded for a running
	// attempt (by any caller: CLI, API, sweeps, pipelines), to wake that
	// attempt's worker so the job stops now rather than at its next
	// heartbeat. workers.NATSControl implements it.
	CancelWaker CancelWaker
	// OnQueuedCancel, when set, is called after Cancel ended a job that was
	// queued, with the attempt that was waiting and when it ended. No worker
	// holds such a job, so nobody else would announce it. It is also called
	// when a cancel finds the job cancelled moments ago (within
	// RecentCancel): that is a retried cancel whose first try committed but
	// whose reply was lost, and its announcement may be lost too. Event IDs
	// derived from job and attempt make the second announcement harmless.
	OnQueuedCancel func(ctx context.Context, jobID string, attempt int, at time.Time)
	// SeparateEnqueue makes Submit enqueue a new job's asynq task after
	// the record, as every other move does, instead of in the record's own
	// script. Redis Cluster needs it: asynq's keys hash to their queue's
	// slot, not the namespace's; NewStore sets it for a cluster client.
	// It costs a round trip per job.
	SeparateEnqueue bool
	// WaitReplicas, when above zero, makes every submission wait until that
	// many replicas hold it (WAIT, at most WaitTimeout) before it counts as
	// recorded; one not confirmed in time fails with jobs.ErrUnavailable
	// and is resubmitted under its idempotency key (see replicated.go).
	// On Redis Cluster the wait is on the master of the namespace's slot.
	WaitReplicas int
	// WaitTimeout bounds that wait; zero means DefaultWaitTimeout.
	WaitTimeout time.Duration
}

// RecentCancel is how long after a job was cancelled a repeated cancel
// announces it again (see StoreOptions.OnQueuedCancel). It matches the event
// stream's duplicate window, within which a repeat is stored once.
const RecentCancel = 2 * time.Minute

// CancelWaker wakes the worker of a running attempt whose cancel Cancel has
// just recorded. It is best effort: the worker finds the cancel at its next
// heartbeat all the same.
type CancelWaker interface {
	Cancelled(ctx context.Context, workerID, jobID string, attempt int)
}

// Store is the job store: job records, their asynq deliveries and the
// fencing that ties the two together.
type Store struct {
	co     *coalescer
	rdb    redis.UniversalClient
	ns     Namespace
	client *asynq.Client
	insp   *asynq.Inspector
	opts   StoreOptions

	// specs keeps the decoded specs of active jobs for ActiveJobs, which the
	// controller calls every tick: a spec never changes, so it is read and
	// decoded once per job, not once per tick.
	specMu sync.Mutex
	specs  map[string]jobs.Spec

	// published holds the asynq queue names already added to asynq's
	// queue set, which asynq.Client also adds once per process.
	published sync.Map

	// names holds each queue's asynqNames (asynqNamesOf).
	names sync.Map
}

// publishQueue adds qname to the set asynq lists queues from (its
// Inspector and our queue stats read it), once per process.
func (s *Store) publishQueue(ctx context.Context, qname string) error {
	if _, ok := s.published.Load(qname); ok {
		return nil
	}
	if err := s.rdb.SAdd(ctx, asynqAllQueues, qname).Err(); err != nil {
		return wrap("queues.Submit", err)
	}
	s.published.Store(qname, true)
	return nil
}

// NewStore returns a store on rdb. Close releases nothing of rdb's: the
// caller owns the Redis client.
func NewStore(rdb redis.UniversalClient, opts StoreOptions) *Store {
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	if opts.IdempotencyTTL <= 0 {
		opts.IdempotencyTTL = DefaultIdempotencyTTL
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	// In a cluster asynq's keys hash to their queue's slot, never to the
	// namespace's, so no script may write both: the task follows the record.
	if _, cluster := rdb.(*redis.ClusterClient); cluster {
		opts.SeparateEnqueue = true
	}
	ns := NewNamespace(opts.Namespace)
	return &Store{
		co:     &coalescer{rdb: rdb, wait: newReplicaWait(opts.WaitReplicas, opts.WaitTimeout, ns.replicationMark())},
		rdb:    rdb,
		ns:     ns,
		client: asynq.NewClientFromRedisClient(rdb),
		insp:   asynq.NewInspectorFromRedisClient(rdb),
		opts:   opts,
	}
}

// Namespace returns the store's namespace.
func (s *Store) Namespace() Namespace { return s.ns }

// Redis returns the underlying client (for the worker registry and tests).
func (s *Store) Redis() redis.UniversalClient { return s.rdb }

// Submitted is the outcome of Submit.
type Submitted struct {
	Job jobs.Job
	// Duplicate is true when the idempotency key matched an existing job.
	Duplicate bool
}

// Submit records a new job in queue and enqueues its first attempt. It
// returns only after the asynq task exists, so a success means the job will
// run. The task is written by the record's own script (see asynqtask.go),
// so the two exist together or not at all; on an error that leaves it
// unclear which, a retry with the same idempotency key returns the job.
// With SeparateEnqueue the task follows the record, and the outbox
// reconciler enqueues it if the caller died in between.
func (s *Store) Submit(ctx context.Context, spec jobs.Spec, q Queue) (Submitted, error) {
	var job jobs.Job
	c, err := s.prepareSubmit(ctx, spec, q, s.opts.Now(), &job)
	if err != nil {
		return Submitted{}, err
	}
	keys, args := s.scriptCall(&c)
	res, err := s.co.runDurable(ctx, submitScript, keys, args...).StringSlice()
	if err != nil {
		return Submitted{}, wrap("queues.Submit", err)
	}
	if len(res) != 2 {
		return Submitted{}, fmt.Errorf("queues.Submit: unexpected script reply %q", res)
	}
	j, dup, err := s.settle(ctx, &c, res[0], res[1])
	if err != nil {
		return Submitted{}, err
	}
	return Submitted{Job: *j, Duplicate: dup}, nil
}

// submitCall is one prepared new job, for submitScript (scriptCall) or
// a group of submitManyScript (groupCall). The job is the caller's (a
// batch's result holds it), not a copy: a batch prepares thousands of
// calls, and a second copy of each job was a good part of what it
// allocated. The scripts' keys and arguments are laid out only when sent,
// each way once.
type submitCall struct {
	job    *jobs.Job
	body   []byte    // the spec's JSON, as the record holds it
	sum    string    // the request's fingerprint (requestSum), in hex
	now    time.Time // the call's time
	inline bool      // the script creates the task (see asynqtask.go)
	task   inlineTask
}

// prepareSubmit checks the queue and encodes a new job of spec in q,
// which it writes to *job.
func (s *Store) prepareSubmit(ctx context.Context, spec jobs.Spec, q Queue, now time.Time, job *jobs.Job) (submitCall, error) {
	// A queue no worker consumes (a pin to a malformed region) would hold
	// the job forever: refuse it before anything is written.
	if err := checkQueue("queues.Submit", q, false); err != nil {
		return submitCall{}, &jobs.ValidationError{Problems: []*jobs.FieldError{{Field: "queue", Message: err.Error()}}}
	}
	body, err := encodeSpec(spec)
	if err != nil {
		return submitCall{}, fmt.Errorf("queues.Submit: encode spec: %w", err)
	}
	sum := sha256.Sum256(body)
	if spec.TraceParent != "" || !spec.StartBy.IsZero() { // the common case encodes the spec once
		if sum, err = requestSum(spec); err != nil {
			return submitCall{}, fmt.Errorf("queues.Submit: encode spec: %w", err)
		}
	}
	at := now.UTC().Truncate(time.Millisecond)
	*job = jobs.Job{ID: jobs.NewID(now), Spec: spec, State: jobs.StateQueued, Attempt: 1, Queue: string(q), CreatedAt: at, QueuedAt: at}
	c := submitCall{job: job, body: body, sum: hex.EncodeToString(sum[:16]), now: now, inline: !s.opts.SeparateEnqueue && !spec.Sized()}
	if c.inline {
		names := s.asynqNamesOf(q)
		if err := s.publishQueue(ctx, names.queue); err != nil {
			return submitCall{}, err
		}
		c.task = newInlineTask(names, c.job)
	}
	return c, nil
}

// scriptCall lays out submitScript's keys and arguments for c.
func (s *Store) scriptCall(c *submitCall) ([]string, []any) {
	j := c.job
	hasIdem := "0"
	if j.Spec.IdempotencyKey != "" {
		hasIdem = "1"
	}
	ms := c.now.UnixMilli()
	keys := append(make([]string, 0, 7), s.ns.Job(j.ID), s.ns.Idempotency(j.Spec.IdempotencyKey), s.ns.JobIndex(), s.ns.Outbox(), s.ns.ActiveJobs())
	args := append(make([]any, 0, 15), j.ID, c.body, j.Queue, ms, s.opts.IdempotencyTTL.Milliseconds(), hasIdem,
		c.sum, ms, j.Spec.Team, j.Spec.Template, string(j.Spec.Class), usageSlots(j.Spec))
	if c.inline {
		keys = append(keys, c.task.key, c.task.pending)
		args = append(args, c.task.msg, c.task.id, c.now.UnixNano())
	}
	return keys, args
}

// settle finishes c after the script's verdict and returns the job the
// outcome names: c's own for a new job (enqueued now if the script did
// not create its task), the existing one for a duplicate (dup true). c's
// job is returned as it is, not copied: a batch's results hold their jobs
// already, and a copy in and out was 1.5 KB a job.
func (s *Store) settle(ctx context.Context, c *submitCall, verdict, id string) (job *jobs.Job, dup bool, err error) {
	switch verdict {
	case "new":
	case "conflict":
		return nil, false, fmt.Errorf("queues.Submit: %w: key %q belongs to job %s; use a new key for a different request",
			jobs.ErrIdempotencyConflict, c.job.Spec.IdempotencyKey, id)
	case "dup":
		j, err := s.Get(ctx, id)
		if err != nil {
			return nil, false, err
		}
		// The first submission may have failed between record and task:
		// finish its enqueue now, so this reply too means "will run".
		if j.State == jobs.StateQueued {
			if err := s.enqueue(ctx, j); err != nil {
				return nil, false, err
			}
		}
		return &j, true, nil
	default:
		return nil, false, fmt.Errorf("queues.Submit: unexpected script verdict %q for job %s", verdict, id)
	}
	if !c.inline {
		if err := s.enqueue(ctx, *c.job); err != nil {
			return nil, false, err
		}
	}
	return c.job, false, nil
}

// specBufs are scratch buffers a spec is encoded into, so that the body
// kept is allocated at its size once, not grown to it.
var specBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// encodeSpec is spec's JSON (Spec.AppendJSON) in a slice of its own.
func encodeSpec(spec jobs.Spec) ([]byte, error) {
	buf := specBufs.Get().(*[]byte)
	b, err := spec.AppendJSON((*buf)[:0])
	out := bytes.Clone(b)
	if cap(b) <= 64<<10 { // a huge one is left to the collector
		*buf = b[:0]
		specBufs.Put(buf)
	}
	return out, err
}

// requestSum identifies the request an idempotency key stands for. The
// traceparent is left out: a client retrying the same request does so from a
// new span, and that must find the first job, not a conflict. So is StartBy,
// which a pipeline step's retried submission derives again from a history
// that may have grown.
func requestSum(spec jobs.Spec) ([sha256.Size]byte, error) {
	spec.TraceParent = ""
	spec.StartBy = time.Time{}
	body, err := encodeSpec(spec)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(body), nil
}

// enqueue creates the asynq task of j's current attempt. An existing task with
// the same ID is success: enqueue is repeatable.
func (s *Store) enqueue(ctx context.Context, j jobs.Job) error {
	if j.Spec.Sized() {
		return s.enqueuePlaced(ctx, j)
	}
	if j.Readmitted && !j.NotBefore.After(s.opts.Now()) {
		return s.enqueueReadmitted(ctx, j)
	}
	opts := []asynq.Option{
		asynq.TaskID(TaskID(j.ID, j.Attempt)),
		asynq.Queue(s.ns.AsynqQueue(Queue(j.Queue))),
		asynq.Timeout(j.Spec.Timeout.Std() + j.Spec.Grace.Std() + timeoutSlack),
		asynq.MaxRetry(infraRetries),
		asynq.Retention(0),
	}
	if j.NotBefore.After(s.opts.Now()) {
		opts = append(opts, asynq.ProcessAt(j.NotBefore))
	}
	task := asynq.NewTask(TaskType, Delivery{JobID: j.ID, Attempt: j.Attempt}.Encode())
	_, err := s.client.EnqueueContext(ctx, task, opts...)
	if err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
		return fmt.Errorf("queues.enqueue %s: %w (the job is recorded and will be enqueued when Redis answers: %v)",
			TaskID(j.ID, j.Attempt), jobs.ErrUnavailable, err)
	}
	return nil
}

// Get returns a job record.
func (s *Store) Get(ctx context.Context, id string) (jobs.Job, error) {
	h, err := s.rdb.HGetAll(ctx, s.ns.Job(id)).Result()
	if err != nil {
		return jobs.Job{}, wrap("queues.Get", err)
	}
	if len(h) == 0 {
		return jobs.Job{}, fmt.Errorf("queues.Get %q: %w", id, jobs.ErrNotFound)
	}
	return decodeRecord(id, h)
}

// ErrFenced is returned by Claim when the controller has declared the
// claiming worker identity dead. The delivery is still valid: the worker must
// take a new identity and let the delivery be retried.
var ErrFenced = errors.New("worker identity fenced by the controller")

// Claim gives delivery d to worker. It returns ok=false for a stale delivery
// (the attempt moved on, or the job was cancelled), which the caller drops.
func (s *Store) Claim(ctx context.Context, d Delivery, worker string) (jobs.Job, bool, error) {
	return s.ClaimAs(ctx, d, worker, "")
}

// ClaimAs is Claim by one incarnation of worker: when another incarnation
// has taken the ID over since (a process restarted under the same --id
// while this one was paused), the claim is refused with ErrFenced before it
// changes anything, so a process that wakes up late cannot start a job
// beside its successor. An empty incarnation skips the check.
func (s *Store) ClaimAs(ctx context.Context, d Delivery, worker, incarnation string) (jobs.Job, bool, error) {
	return s.ClaimBy(ctx, d, Claimant{Worker: worker, Incarnation: incarnation})
}

// Claimant is who claims a delivery: a worker ID, the incarnation of its
// process ("" skips that check) and the pool it registers under. A known
// pool saves the claim a read of the registration; "" reads it there.
type Claimant struct {
	Worker, Incarnation, Pool string
}

// ClaimBy is ClaimAs for a claimant that also names its pool.
func (s *Store) ClaimBy(ctx context.Context, d Delivery, c Claimant) (jobs.Job, bool, error) {
	now := s.opts.Now().UnixMilli()
	// Durable: with StoreOptions.WaitReplicas a job starts only once the
	// replicas hold its claim (see replicated.go).
	v, err := s.co.runDurable(ctx, claimScript,
		[]string{s.ns.Job(d.JobID), s.ns.Outbox(), s.ns.WorkerJobs(c.Worker), s.ns.WorkerTombstone(c.Worker), s.ns.Worker(c.Worker),
			s.ns.WorkerIncarnation(c.Worker)},
		d.JobID, d.Attempt, c.Worker, now, c.Incarnation, c.Pool).Result()
	if err != nil {
		return jobs.Job{}, false, WrapClaim("queues.Claim", err)
	}
	if v == "fenced" {
		return jobs.Job{}, false, fmt.Errorf("queues.Claim %s by %s: %w", TaskID(d.JobID, d.Attempt), c.Worker, ErrFenced)
	}
	list, ok := v.([]any)
	if !ok {
		return jobs.Job{}, false, nil
	}
	if len(list) != 2+len(claimFields) {
		return jobs.Job{}, false, fmt.Errorf("queues.Claim: unexpected script reply of %d values", len(list))
	}
	if list[0] == "claimed" {
		pool, _ := list[1].(string)
		j, err := claimedJob(d.JobID, list[2:], c, pool, now)
		return j, err == nil, err
	}
	// A retry of a claim already made: the values as on record.
	j, err := recordedJob(d.JobID, list[2:])
	return j, err == nil, err
}

// Finish records the end of j's attempt on worker. It returns false when the
// attempt was no longer the worker's (moved or recovered meanwhile), in which
// case nothing changes. Finish is repeatable: when this same end is already
// on record (a retry after a reply was lost), it returns true, so the caller
// announces the end it made.
func (s *Store) Finish(ctx context.Context, j jobs.Job, worker string, state jobs.State, exitCode *int, errMsg string) (bool, error) {
	n, err := s.finish(ctx, j, worker, "", state, exitCode, errMsg, time.Time{})
	return n == 1 || n == 2, err
}

// MemberEnd is what FinishMember recorded.
type MemberEnd int

// Outcomes of FinishMember.
const (
	// MemberFenced: the attempt is not the member's worker's any more.
	MemberFenced MemberEnd = iota
	// MemberDone: the member succeeded; others of the gang still run.
	MemberDone
	// JobEnded: the job ended in the given state (the last member to
	// succeed, or any member's failure or cancel).
	JobEnded
)

// FinishMember records the end of member (its index) of a gang's attempt
// on worker: a success is the job's only when it is the last member's; a
// failure or a cancel ends the job at once (the other members find their
// attempt over and stop). Repeatable like Finish.
func (s *Store) FinishMember(ctx context.Context, j jobs.Job, worker string, member int, state jobs.State, exitCode *int, errMsg string) (MemberEnd, error) {
	n, err := s.finish(ctx, j, worker, strconv.Itoa(member), state, exitCode, errMsg, time.Time{})
	switch {
	case err != nil:
		return MemberFenced, err
	case n == 3:
		return MemberDone, nil
	case n == 1 || n == 2:
		return JobEnded, nil
	}
	return MemberFenced, nil
}

// finish records the end as of now, or, for a late record of it (Refinish),
// as of at (see finishScript's departMs).
func (s *Store) finish(ctx context.Context, j jobs.Job, worker, member string, state jobs.State, exitCode *int, errMsg string, at time.Time) (int, error) {
	if !state.Terminal() {
		return 0, fmt.Errorf("queues.Finish: %q is not a terminal state", state)
	}
	code := ""
	if exitCode != nil {
		code = strconv.Itoa(*exitCode)
	}
	now, depart := s.opts.Now(), ""
	if at.IsZero() {
		at = now
	} else {
		depart = strconv.FormatInt(now.UnixMilli(), 10)
	}
	n, err := s.runScript(ctx, finishScript,
		[]string{s.ns.Job(j.ID), s.ns.WorkerJobs(worker), s.ns.JobLog(j.ID), s.ns.ActiveJobs(), s.ns.JobMetrics(j.ID), s.ns.usage()},
		j.ID, j.Attempt, worker, string(state), at.UnixMilli(), code, errMsg,
		s.opts.Retention.Milliseconds(), s.ns.WorkerPrefix(), member, depart).Int()
	if err != nil {
		return 0, wrap("queues.Finish", err)
	}
	return n, nil
}

// Requeue describes why and where a running attempt is sent back.
type Requeue struct {
	// Queue is the target queue; "" sends the next attempt where a pending
	// preempt request asked, else keeps the job's queue.
	Queue Queue
	// NotBefore delays the next attempt (retry back-off).
	NotBefore time.Time
	// Retry counts the move as a retry after failure rather than a requeue.
	Retry bool
	// Preempt counts the move as a preemption the controller asked for
	// (RequestPreempt) rather than a requeue. Its reason is recorded as the
	// job's last move, not its last error: being moved is not a failure.
	Preempt bool
	// Spot marks a preemption by the spot market (a spot notice): it also
	// counts against the job's spot budget, after which it runs on-demand.
	Spot bool
	// Reason is recorded as the job's last error (last move for a
	// preemption). "" for a preemption means "preempted: " and the reason
	// given to RequestPreempt.
	Reason string
}

// Requeued is the outcome of Requeue.
type Requeued struct {
	// Attempt is the new attempt, 0 when nothing moved.
	Attempt int
	// Queue is where the new attempt waits.
	Queue Queue
	// Reason is the reason recorded (for a preemption, built from the
	// controller's request).
	Reason string
	// Cancelled is true when a pending cancel ended the job instead.
	Cancelled bool
}

// Requeue ends j's running attempt (fenced on worker, "" for any) and queues
// the next one, which resumes from the last checkpoint. A pending preempt
// request is cleared whatever the counter: it was made for this attempt.
func (s *Store) Requeue(ctx context.Context, j jobs.Job, worker string, r Requeue) (Requeued, error) {
	if r.Retry && r.Preempt {
		return Requeued{}, errors.New("queues.Requeue: a move is a retry or a preemption, not both")
	}
	if err := checkQueue("queues.Requeue", r.Queue, true); err != nil {
		return Requeued{}, err
	}
	now := s.opts.Now()
	counter := "requeues"
	switch {
	case r.Retry:
		counter = "retries"
	case r.Preempt:
		counter = "preemptions"
	}
	notBefore := r.NotBefore
	if notBefore.Before(now) {
		notBefore = now
	}
	v, err := requeueScript.Run(ctx, s.rdb,
		[]string{s.ns.Job(j.ID), s.ns.Outbox(), s.ns.WorkerJobs(j.Worker), s.ns.ActiveJobs(), s.ns.JobLog(j.ID), s.ns.JobMetrics(j.ID), s.ns.usage()},
		j.ID, j.Attempt, worker, string(r.Queue), now.UnixMilli(), notBefore.UnixMilli(), counter, r.Reason, flag(r.Spot),
		s.opts.Retention.Milliseconds(), s.ns.WorkerPrefix()).Slice()
	if err != nil {
		return Requeued{}, wrap("queues.Requeue", err)
	}
	if len(v) != 3 {
		return Requeued{}, fmt.Errorf("queues.Requeue: unexpected script reply %v", v)
	}
	n, _ := v[0].(int64)
	q, _ := v[1].(string)
	reason, _ := v[2].(string)
	switch {
	case n == -1:
		return Requeued{Cancelled: true, Reason: reason}, nil
	case n == 0:
		return Requeued{}, nil
	}
	next := j
	next.Attempt = int(n)
	next.NotBefore = notBefore
	next.Queue = q
	next.Readmitted = !r.Retry
	// The new attempt is unplaced: a sized job waits for the policy to
	// place it again, with no delivery on the old placement's workers.
	next.Placed = nil
	// A failed enqueue here is not lost: the attempt sits in the outbox.
	return Requeued{Attempt: int(n), Queue: Queue(q), Reason: reason}, s.enqueue(ctx, next)
}

// Move sends a queued job to queue to as a new attempt (lend: burst to loan;
// unlend: loan to burst), and records reason as its last move. It is fenced
// on attempt: when the job is no longer queued at that attempt (claimed,
// moved or cancelled meanwhile) nothing changes and it returns 0, nil.
//
// Order matters: the record moves first, then the new attempt's task is
// enqueued, then the old task is deleted. A delivery of the old attempt that
// a worker already fetched cannot be deleted, but its claim fails on the
// attempt; a crash before the enqueue leaves the job in the outbox, and the
// reconciler enqueues it. So nothing is lost and nothing runs twice. An
// error after the record moved comes with the new attempt, which the outbox
// will enqueue.
func (s *Store) Move(ctx context.Context, jobID string, attempt int, to Queue, reason string) (int, error) {
	return s.move(ctx, jobID, attempt, to, reason, false, false)
}

// move is Move; readmit marks the job as admitted once (see Readmit),
// admit as admitted from held by rule 9 (see AdmitHeld).
func (s *Store) move(ctx context.Context, jobID string, attempt int, to Queue, reason string, readmit, admit bool) (int, error) {
	if err := checkQueue("queues.Move", to, false); err != nil {
		return 0, err
	}
	v, err := moveScript.Run(ctx, s.rdb, []string{s.ns.Job(jobID), s.ns.Outbox()},
		jobID, attempt, string(to), s.opts.Now().UnixMilli(), reason, flag(readmit), flag(admit)).Slice()
	if err != nil {
		return 0, wrap("queues.Move", err)
	}
	if len(v) != 2 {
		return 0, nil
	}
	from, _ := v[0].(string)
	rec, _ := v[1].([]any)
	j, err := decodeRecord(jobID, pairsToMap(rec))
	if err != nil {
		return 0, err
	}
	if err := s.enqueue(ctx, j); err != nil {
		// The move is recorded; the outbox makes the enqueue happen later.
		return j.Attempt, err
	}
	// Best effort, like Cancel: the old task may be active already (the
	// claim drops it) or gone; it only keeps queue depths honest.
	_ = s.insp.DeleteTask(s.ns.AsynqQueue(Queue(from)), TaskID(jobID, attempt))
	return j.Attempt, nil
}

// RequestPreempt asks the worker running attempt of jobID to stop it (SIGTERM,
// the grace period to checkpoint) and requeue the next attempt in queue to,
// counted as a preemption. It returns false when that attempt is not running
// (it ended or moved on) or a cancel is pending, which wins.
//
// The request is only recorded here; the worker acts on it at its next
// heartbeat, or at once when woken with NotifyControl from package workers.
// If the job ends by itself first, Finish drops the request.
func (s *Store) RequestPreempt(ctx context.Context, jobID string, attempt int, to Queue, reason string) (bool, error) {
	if err := checkQueue("queues.RequestPreempt", to, false); err != nil {
		return false, err
	}
	return s.requestPreempt(ctx, jobID, attempt, to, reason, false, false)
}

// RequestGangHandOver is RequestPreempt for a gang member's worker that
// drains and asks member 0 to checkpoint and move the gang: a preemption
// already pending (the controller's, sending the gang elsewhere) stands as
// it is, and the call reports true, since member 0 moves the gang either
// way.
func (s *Store) RequestGangHandOver(ctx context.Context, jobID string, attempt int, to Queue, reason string) (bool, error) {
	if err := checkQueue("queues.RequestGangHandOver", to, false); err != nil {
		return false, err
	}
	return s.requestPreempt(ctx, jobID, attempt, to, reason, false, true)
}

// RequestSpotPreempt is RequestPreempt for a spot notice received by a
// worker that does not carry the preemption out itself (a gang's member
// other than member 0): the requeue counts it against the job's spot budget
// whoever makes it.
func (s *Store) RequestSpotPreempt(ctx context.Context, jobID string, attempt int, to Queue, reason string) (bool, error) {
	if err := checkQueue("queues.RequestPreempt", to, false); err != nil {
		return false, err
	}
	return s.requestPreempt(ctx, jobID, attempt, to, reason, true, false)
}

func (s *Store) requestPreempt(ctx context.Context, jobID string, attempt int, to Queue, reason string, spot, keep bool) (bool, error) {
	n, err := requestPreemptScript.Run(ctx, s.rdb, []string{s.ns.Job(jobID)}, attempt, string(to), reason, flag(spot), flag(keep)).Int()
	if err != nil {
		return false, wrap("queues.RequestPreempt", err)
	}
	return n == 1, nil
}

// checkQueue refuses a queue name no worker consumes: a job sent there would
// wait forever. "" passes only when it means "unchanged".
func checkQueue(op string, q Queue, emptyOK bool) error {
	if q == "" && emptyOK {
		return nil
	}
	if q.Valid() {
		return nil
	}
	if (q.Elastic() || q.Overflow()) && q.Region() != "" {
		return fmt.Errorf("%s: queue %q: region %q is not a valid region name (1 to %d of a-z, 0-9, \"-\")",
			op, q, q.Region(), MaxRegionLen)
	}
	return fmt.Errorf("%s: unknown queue %q (use core, loan, burst, ondemand, overflow or held, or burst@REGION, ondemand@REGION or overflow@REGION)", op, q)
}

// Checkpoint records the last checkpoint of j's running attempt.
func (s *Store) Checkpoint(ctx context.Context, j jobs.Job, worker, checkpoint string) (bool, error) {
	n, err := checkpointScript.Run(ctx, s.rdb, []string{s.ns.Job(j.ID)},
		j.Attempt, worker, checkpoint, s.opts.Now().UnixMilli()).Int()
	if err != nil {
		return false, wrap("queues.Checkpoint", err)
	}
	return n == 1, nil
}

// CancelResult says what Cancel did.
type CancelResult string

// Outcomes of Cancel.
const (
	// Cancelled: the job was queued and is now cancelled.
	Cancelled CancelResult = "cancelled"
	// CancelRequested: the job is running; its worker stops it within a
	// heartbeat and records it as cancelled.
	CancelRequested CancelResult = "requested"
	// AlreadyFinished: the job had ended; nothing changed.
	AlreadyFinished CancelResult = "finished"
)

// Cancel cancels a job.
func (s *Store) Cancel(ctx context.Context, id string) (CancelResult, error) {
	res, err := cancelScript.Run(ctx, s.rdb, []string{s.ns.Job(id), s.ns.Outbox(), s.ns.ActiveJobs(), s.ns.JobMetrics(id), s.ns.JobLog(id)},
		id, s.opts.Now().UnixMilli(), s.opts.Retention.Milliseconds()).StringSlice()
	if err != nil {
		return "", wrap("queues.Cancel", err)
	}
	switch res[0] {
	case "gone":
		return "", fmt.Errorf("queues.Cancel %q: %w", id, jobs.ErrNotFound)
	case "cancelled":
		// The task would be dropped by the claim anyway; deleting it keeps
		// queue depths honest. Best effort: it may already be running.
		_ = s.insp.DeleteTask(s.ns.AsynqQueue(Queue(res[2])), TaskID(id, atoi(res[1])))
		if s.opts.OnQueuedCancel != nil {
			s.opts.OnQueuedCancel(ctx, id, atoi(res[1]), s.opts.Now())
		}
		return Cancelled, nil
	case "requested":
		if s.opts.CancelWaker != nil && len(res) == 3 && res[1] != "" {
			s.opts.CancelWaker.Cancelled(ctx, res[1], id, atoi(res[2]))
		}
		return CancelRequested, nil
	}
	if len(res) == 4 && res[1] == string(jobs.StateCancelled) && s.opts.OnQueuedCancel != nil {
		if at := msTime(res[3]); s.opts.Now().Sub(at) < RecentCancel {
			s.opts.OnQueuedCancel(ctx, id, atoi(res[2]), at)
		}
	}
	return AlreadyFinished, nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
