package controller_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/redisinfo"
)

// logRecords keeps every record logged through it, for tests that assert
// what an operator is told.
type logRecords struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r.Clone())
	return nil
}
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecords) WithGroup(string) slog.Handler      { return l }

// at returns the messages logged at level.
func (l *logRecords) at(level slog.Level) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.recs {
		if r.Level == level {
			out = append(out, r.Message)
		}
	}
	return out
}

// lostData starts what a controller logs when it finds the data gone.
const lostData = "Redis lost its data at "

// TestLeaderNoticesRedisCameBackEmpty: a leader that saw the namespace
// marker, then finds the namespace empty (as after a restart of a Redis
// without persistence), logs that accepted jobs were lost and writes the
// marker again; a first start on an empty namespace is not a loss.
func TestLeaderNoticesRedisCameBackEmpty(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	logs := &logRecords{}
	opts := fastOptions("a")
	opts.Logger = slog.New(logs)
	ctl, err := controller.New(store, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ctl.Tick(ctx)
	ctl.Tick(ctx)
	if !ctl.Leader() {
		t.Fatal("a does not lead")
	}
	if errs := logs.at(slog.LevelError); len(errs) != 0 {
		t.Fatalf("a first start logged errors: %q", errs)
	}
	first, err := store.Started(ctx)
	if err != nil || first.IsZero() {
		t.Fatalf("marker after the first lead: %v %v", first, err)
	}
	if _, err := store.Submit(ctx, jobs.Spec{Command: []string{"true"}, Class: jobs.ClassCore,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}, queues.QueueCore); err != nil {
		t.Fatal(err)
	}

	// Redis comes back empty: the marker, the records, the outbox, the
	// lease, all gone.
	testenv.DeleteNamespace(rdb, ns)
	if n, _, err := store.Holdings(ctx); err != nil || n != 0 {
		t.Fatalf("namespace not emptied: %d records, %v", n, err)
	}
	ctl.Tick(ctx)
	if errs := logs.at(slog.LevelError); len(errs) != 1 || !strings.HasPrefix(errs[0], lostData) || strings.Contains(errs[0], "before this controller started") {
		t.Fatalf("errors logged %q, want exactly one starting %q", errs, lostData)
	}
	if again, err := store.Started(ctx); err != nil || again.IsZero() {
		t.Fatalf("marker not written again: %v %v", again, err)
	}
	ctl.Tick(ctx)
	if errs := logs.at(slog.LevelError); len(errs) != 1 {
		t.Fatalf("a tick with the marker back logged %q", errs)
	}
}

// TestCheckRedisWarnsOnTheTestRedis: the shared test Redis has neither AOF
// nor RDB, and the start-up check names both settings and the fix.
func TestCheckRedisWarnsOnTheTestRedis(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	logs := &logRecords{}
	d := controller.CheckRedis(context.Background(), redisinfo.New(queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})), slog.New(logs))
	if d.Settings["appendonly"] != "no" || d.Settings["save"] != "" {
		t.Skipf("the test Redis persists (appendonly %q, save %q)", d.Settings["appendonly"], d.Settings["save"])
	}
	want := `redis: appendonly no and save "": a restart loses accepted jobs; set appendonly yes (appendfsync everysec)`
	if w := logs.at(slog.LevelWarn); len(w) == 0 || w[0] != want {
		t.Fatalf("warnings %q, want first %q", w, want)
	}
	if d.Durable() {
		t.Fatalf("judged durable: %+v", d)
	}
}

// TestControllerStartingOnAnEmptiedRedisSaysSo: no controller was running
// when Redis lost its data, so none saw the marker go. The first one to
// start finds no marker, which a first start finds too; the event stream,
// which NATS keeps apart from Redis, tells them apart.
func TestControllerStartingOnAnEmptiedRedisSaysSo(t *testing.T) {
	t.Parallel()
	srv := testenv.NATS(t)
	nc := testenv.NATSConn(t, srv)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range []string{"fresh", "emptied", "raced"} {
		if err := eventbus.EnsureStream(ctx, js, strings.ToUpper(name), events.Subjects{Prefix: name}, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	// The emptied installation's stream remembers a job.
	ev := events.Event{ID: events.NewID(), Type: events.TypeJobQueued, JobID: "j1", Attempt: 1, Time: time.Now()}
	if err := eventbus.NewNATSPublisher(nc, events.Subjects{Prefix: "emptied"}).Publish(ctx, ev); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, "the event stored", func() bool {
		n, _, err := eventbus.Stored(ctx, js, "EMPTIED")
		return err == nil && n == 1
	})
	// startOn starts a controller on an empty namespace whose stream is
	// stream, after accept (if set) has put work in it, and returns the
	// errors it logged in two ticks.
	startOn := func(stream string, accept func(*queues.Store)) []string {
		rdb, ns := testenv.Redis(t)
		store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
		if accept != nil {
			accept(store)
		}
		logs := &logRecords{}
		opts := fastOptions("a")
		opts.Logger = slog.New(logs)
		opts.PriorEvents = func(ctx context.Context) (uint64, time.Time, error) { return eventbus.Stored(ctx, js, stream) }
		opts.FirstJobEvent = func(ctx context.Context) (string, bool, error) {
			e, ok, err := eventbus.FirstJobEvent(ctx, js, stream, 100)
			return e.JobID, ok, err
		}
		ctl, err := controller.New(store, opts)
		if err != nil {
			t.Fatal(err)
		}
		ctl.Tick(ctx)
		ctl.Tick(ctx)
		return logs.at(slog.LevelError)
	}
	if errs := startOn("FRESH", nil); len(errs) != 0 {
		t.Fatalf("a first start logged errors: %q", errs)
	}
	errs := startOn("EMPTIED", nil)
	if len(errs) != 1 || !strings.Contains(errs[0], "Redis lost its data before this controller started") {
		t.Fatalf("errors logged %q, want one saying Redis lost its data before the start", errs)
	}
	// A first start that a submission reached before the first tick: the
	// stream's oldest job event names a job Redis holds. A worker's event
	// before it names no job and is passed over.
	raced := eventbus.NewNATSPublisher(nc, events.Subjects{Prefix: "raced"})
	if err := raced.Publish(ctx, events.Event{ID: events.NewID(), Type: events.TypeWorkerUp, Worker: "w1", Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	errs = startOn("RACED", func(store *queues.Store) {
		sub, err := store.Submit(ctx, jobs.Spec{Command: []string{"true"}, Class: jobs.ClassCore, Timeout: jobs.Duration(time.Minute)}, queues.QueueCore)
		if err != nil {
			t.Fatal(err)
		}
		ev := events.Event{ID: events.NewID(), Type: events.TypeJobQueued, JobID: sub.Job.ID, Attempt: 1, Time: time.Now()}
		if err := raced.Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 5*time.Second, "the events stored", func() bool {
			n, _, err := eventbus.Stored(ctx, js, "RACED")
			return err == nil && n == 2
		})
	})
	if len(errs) != 0 {
		t.Fatalf("a first start that accepted work before its first tick logged errors: %q", errs)
	}
}

// TestStandbyThatTakesOverAfterALossSaysWhen: the lease lives in Redis, so
// after Redis comes back empty the standby may lead next. It had looked at
// the epoch all along, so it says when the data went, not that it went
// "before this controller started" (what a standby said when only the
// leader looked), and the loss record and event are written once.
func TestStandbyThatTakesOverAfterALossSaysWhen(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()
	// The stream holds events once jobs ran: none at the first start.
	var ran atomic.Bool
	priorEvents := func(context.Context) (uint64, time.Time, error) {
		if ran.Load() {
			return 5, time.Now(), nil
		}
		return 0, time.Time{}, nil
	}
	var losses []*queues.DataLoss
	var lossMu sync.Mutex
	newCtl := func(id string, logs *logRecords) *controller.Controller {
		opts := fastOptions(id)
		opts.Logger = slog.New(logs)
		opts.PriorEvents = priorEvents
		opts.OnDataLoss = func(l *queues.DataLoss) {
			lossMu.Lock()
			defer lossMu.Unlock()
			losses = append(losses, l)
		}
		ctl, err := controller.New(store, opts)
		if err != nil {
			t.Fatal(err)
		}
		return ctl
	}
	leaderLogs, standbyLogs := &logRecords{}, &logRecords{}
	leader, standby := newCtl("a", leaderLogs), newCtl("b", standbyLogs)
	leader.Tick(ctx)
	standby.Tick(ctx)
	if !leader.Leader() || standby.Leader() {
		t.Fatal("a should lead, b stand by")
	}
	ran.Store(true)
	// Redis comes back empty; the standby ticks first and takes the lease.
	testenv.DeleteNamespace(rdb, ns)
	standby.Tick(ctx)
	if !standby.Leader() {
		t.Fatal("the standby did not take the vanished lease")
	}
	errs := standbyLogs.at(slog.LevelError)
	if len(errs) != 1 || !strings.HasPrefix(errs[0], lostData) || strings.Contains(errs[0], "before this controller started") {
		t.Fatalf("standby logged %q, want one loss naming when, not \"before this controller started\"", errs)
	}
	leader.Tick(ctx)
	if errs := leaderLogs.at(slog.LevelError); len(errs) != 1 || !strings.HasPrefix(errs[0], lostData) {
		t.Fatalf("old leader logged %q, want one loss", errs)
	}
	_, loss, err := store.ReadEpoch(ctx)
	if err != nil || loss == nil || loss.By != "controller b" || loss.Reason != queues.LossGone {
		t.Fatalf("loss record %+v %v, want epoch_gone noticed by controller b", loss, err)
	}
	if standby.DataLoss() == nil || leader.DataLoss() == nil {
		t.Fatal("a controller does not report the loss record")
	}
	if _, err := store.AckDataLoss(ctx); err != nil {
		t.Fatal(err)
	}
	standby.Tick(ctx)
	if standby.DataLoss() != nil {
		t.Fatal("the loss is still reported after it was acknowledged")
	}
	lossMu.Lock()
	defer lossMu.Unlock()
	if len(losses) == 0 || losses[len(losses)-1] != nil {
		t.Fatalf("OnDataLoss saw %v, want it to end with nil once acknowledged", losses)
	}
}
