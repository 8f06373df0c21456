package queues

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Waiting for replicas before a submission is accepted.
//
// Redis replicates asynchronously: a write it acknowledged can be lost
// when its master fails before a replica received it, and a replica
// promoted then does not hold it. For a submission that is a job the
// caller was told is accepted, and that will never run. With
// StoreOptions.WaitReplicas set, every pipeline that records submissions
// ends with WAIT, on the connection that wrote them, and a submission is
// answered as recorded only once that many replicas hold it; otherwise
// its caller gets an error wrapping jobs.ErrUnavailable, and resubmits
// with the same idempotency key: the job is found if it survived, and
// recorded anew if it did not. WAIT does not make Redis strongly
// consistent (a replica that acknowledged can itself be lost), but it
// closes the common case of a master killed moments after a write.
//
// A resubmission that finds its job already recorded writes nothing, and
// its WAIT must still cover the first write, made on another connection.
// WAIT waits for the replication offset the connection reached with its
// last write, and which commands count differs between versions: Redis
// 7.0 sets it after every command, read-only ones too, while 7.2 and
// later move it only for a command that was replicated. So every pipeline
// that waits writes one key of its namespace (replicationMark) just before
// its WAIT: the offset is then the master's at that moment, and the
// replication stream is in order, so the WAIT covers everything the
// master wrote before, on any connection, on any version.
//
// The price is availability: while fewer replicas than asked for answer
// (after a failover, until a new replica has synced), every submission
// fails, so an install asks for fewer replicas than it runs.
//
// On Redis Cluster the pipeline goes to the master of the namespace's
// slot directly (see replicaWait.client).
//
// Claims wait too. A claim lost in a failover leaves the promoted replica
// holding the attempt as not yet claimed, and the controller moves its
// held delivery on (HeldDeliveries): a second worker claims and starts it
// while the first still runs it, until the first worker's next beat finds
// the attempt gone and stops it. A job that must run at most once then ran
// twice for up to a beat. With WaitReplicas a worker starts a job only once
// the replicas hold its claim (WrapClaim). A claim they do not confirm may
// still stand on the master; the worker does not start the job, and either
// asynq's redelivery claims it again (a claim is repeatable) or the
// worker's beats name the attempt it does not run (Beat.Unrecorded) and
// it is requeued. A take (Take), which pops deliveries and claims them in
// one script, waits too; one the replicas do not confirm has no
// redelivery to come back with, and is settled by the worker's retry
// under the same token, which is answered with what the first try took.
// A gang member waits as well before it passes its
// barrier (gangs.Store.Barrier): the gang's start is its last member's
// claim, on which the other members act too.
//
// Nothing else waits: what else a failover loses is repaired without the
// caller. A lost end or requeue leaves an attempt on record as running on
// a worker that no longer runs it, which the worker's beats name and the
// worker records again or requeues (see unrecorded.go). A lost submission
// is repaired by nothing.

// DefaultWaitTimeout is how long a pipeline of submissions waits for its
// replicas when StoreOptions.WaitTimeout is not set.
const DefaultWaitTimeout = time.Second

// notReplicatedError says a pipeline's writes are on the master but not yet
// confirmed by the replicas asked for.
type notReplicatedError struct {
	want, got int
	within    time.Duration
	err       error // the WAIT's own error, if it failed
}

func (e *notReplicatedError) Error() string {
	return "recorded on the Redis master, but " + e.answered() +
		": resubmit with the same idempotency key, which finds the job if it survived and records it if it did not"
}

// answered says what the WAIT answered.
func (e *notReplicatedError) answered() string {
	got := fmt.Sprintf("%d", e.got)
	if e.err != nil {
		got = fmt.Sprintf("an error (%v)", e.err)
	}
	return fmt.Sprintf("WAIT for %d replicas (redis.wait_replicas) answered %s within %s", e.want, got, e.within)
}

// NotReplicated reports whether err says that writes are on the master
// but the replicas asked for did not confirm them, and what the WAIT
// answered, for callers outside this package to say what it means for
// them.
func NotReplicated(err error) (answered string, ok bool) {
	var nr *notReplicatedError
	if errors.As(err, &nr) {
		return nr.answered(), true
	}
	return "", false
}

// WrapClaim is Wrap for a claim, which a worker runs through
// Kernel.RunDurable: a claim the replicas did not confirm is unavailable,
// and says that the job does not start until it is claimed again, not
// that anyone should resubmit.
func WrapClaim(op string, err error) error {
	return wrapUnconfirmed(op, "the claim", "the job does not start here until a redelivery claims it again", err)
}

// wrapUnconfirmed is Wrap for a durable write a worker acts on (what it
// is, "the claim"): one the replicas did not confirm, or whose slot moved
// while it waited for them, is unavailable, and its error says what comes
// of it (then) instead of asking anyone to resubmit.
func wrapUnconfirmed(op, what, then string, err error) error {
	if answered, ok := NotReplicated(err); ok {
		return fmt.Errorf("%s: %w: %s is on the Redis master, but %s: %s", op, jobs.ErrUnavailable, what, answered, then)
	}
	var sm *slotMovedError
	if errors.As(err, &sm) {
		return fmt.Errorf("%s: %w: the namespace's slot moved while %s waited for its replicas (%v): %s",
			op, jobs.ErrUnavailable, what, sm.err, then)
	}
	return wrap(op, err)
}

// slotMovedError says the namespace's slot moved while a waiting
// submission was sent to its master's node client, which does not follow
// MOVED or ASK as the cluster client does.
type slotMovedError struct{ err error }

func (e *slotMovedError) Error() string {
	return fmt.Sprintf("the namespace's slot moved while the submission waited for its replicas (%v): resubmit with the same idempotency key", e.err)
}

// moved turns a MOVED or ASK reply that a waiting submission got from the
// node client of rdb, a cluster client, into a slotMovedError, and asks
// rdb to reread the slots so the retry finds the new master at once. Any
// other error, and any error on another kind of client (a plain client
// pointed at one node of a cluster is a config mistake, not an outage),
// passes unchanged.
func (w replicaWait) moved(ctx context.Context, rdb redis.UniversalClient, err error) error {
	cc, ok := rdb.(*redis.ClusterClient)
	var re redis.Error
	if !ok || w.replicas <= 0 || err == nil || !errors.As(err, &re) ||
		!(strings.HasPrefix(re.Error(), "MOVED ") || strings.HasPrefix(re.Error(), "ASK ")) {
		return err
	}
	cc.ReloadState(ctx)
	return &slotMovedError{err: err}
}

// replicaWait is the WAIT a store's submissions end with; zero replicas
// means none. mark is the key written before it (replicationMark).
type replicaWait struct {
	replicas int
	timeout  time.Duration
	mark     string
}

func newReplicaWait(replicas int, timeout time.Duration, mark string) replicaWait {
	if replicas <= 0 {
		return replicaWait{}
	}
	return replicaWait{replicas: replicas, timeout: cmp.Or(timeout, DefaultWaitTimeout), mark: mark}
}

// markTTL is how long a replication mark outlives the last pipeline that
// wrote it: it holds nothing anyone reads, so it only needs not to pile up.
const markTTL = time.Hour

// client is what a pipeline of submissions that waits is sent on: rdb
// itself, whose pipeline is one connection, or on a cluster the master of
// key's slot (a namespace's keys share one). A cluster client would send
// a WAIT, which names no key, to some node, not necessarily the one the
// writes went to. A node client does not follow MOVED: a slot that moved
// meanwhile fails the pipeline as unavailable (see wrap), and the retry
// finds the new master once the cluster client has reread the slots.
func (w replicaWait) client(ctx context.Context, rdb redis.UniversalClient, key string) (redis.UniversalClient, error) {
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return rdb, nil
	}
	node, err := cc.MasterForKey(ctx, key)
	if err != nil {
		return nil, err
	}
	return node, nil
}

// add appends the WAIT to pipeline p, or returns nil when none is wanted.
func (w replicaWait) add(ctx context.Context, p redis.Pipeliner) *redis.IntCmd {
	if w.replicas <= 0 {
		return nil
	}
	// A write of the pipeline's own, so that the WAIT covers what the
	// master wrote before it on any connection (see above).
	p.Set(ctx, w.mark, "1", markTTL)
	// WAIT counts in whole milliseconds, and 0 would wait for ever.
	cmd := redis.NewIntCmd(ctx, "wait", w.replicas, max(w.timeout.Milliseconds(), 1))
	_ = p.Process(ctx, cmd)
	return cmd
}

// check is nil when the WAIT added to a pipeline (nil: none) was answered
// by enough replicas.
func (w replicaWait) check(cmd *redis.IntCmd) error {
	if cmd == nil {
		return nil
	}
	if n, err := cmd.Result(); err != nil || int(n) < w.replicas {
		return &notReplicatedError{want: w.replicas, got: int(n), within: w.timeout, err: err}
	}
	return nil
}
