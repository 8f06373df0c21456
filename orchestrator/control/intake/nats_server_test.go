package intake_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func TestNATSSubmitReturnsReceipt(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	e := startNATS(t, rec, intake.NATSOptions{})
	got := e.request(t, mustJSON(t, submission("k1")))
	want := intake.Receipt{JobID: "job-k1", Attempt: 1, State: jobs.StateQueued, Queue: "burst"}
	if got.err != nil || got.receipt != want {
		t.Fatalf("got %+v / %+v, want %+v", got.receipt, got.err, want)
	}
	subs := rec.submissions()
	if len(subs) != 1 || !reflect.DeepEqual(subs[0], submission("k1")) {
		t.Fatalf("the Submitter got %+v", subs)
	}

	rec.set(func(context.Context, jobs.Submission) (intake.Receipt, error) {
		return intake.Receipt{JobID: "old", Attempt: 2, State: jobs.StateRunning, Queue: "core", Duplicate: true}, nil
	})
	if got := e.request(t, mustJSON(t, submission("k1"))); !got.receipt.Duplicate || got.receipt.JobID != "old" {
		t.Fatalf("duplicate: got %+v", got)
	}
}

func TestNATSDropsMessagesWithoutReplySubject(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	e := startNATS(t, rec, intake.NATSOptions{})
	if err := e.client.Publish(subj.Submit(), mustJSON(t, submission("fire-and-forget"))); err != nil {
		t.Fatal(err)
	}
	// One subscription handles one connection's messages in order, so the
	// answer to this request means the publish was seen first.
	if r := e.request(t, mustJSON(t, submission("asked"))); r.err != nil {
		t.Fatal(r.err)
	}
	subs := rec.submissions()
	if len(subs) != 1 || subs[0].IdempotencyKey != "asked" {
		t.Fatalf("the Submitter got %+v, want only the request", subs)
	}
	if !strings.Contains(e.log.String(), "without a reply subject") {
		t.Fatalf("the drop was not logged; log:\n%s", e.log)
	}
}

// gate is a Submitter that holds every call until released and tracks how
// many run at once.
type gate struct {
	release  chan struct{}
	inflight atomic.Int32
	max      atomic.Int32
	started  atomic.Int32
	once     sync.Once
}

func newGate() *gate { return &gate{release: make(chan struct{})} }

// open releases every call. Tests also register it as a cleanup after the
// server's, so that a failing test does not leave Stop waiting (cleanups run
// last registered first).
func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

func (g *gate) Submit(ctx context.Context, s jobs.Submission) (intake.Receipt, error) {
	n := g.inflight.Add(1)
	defer g.inflight.Add(-1)
	g.started.Add(1)
	for {
		m := g.max.Load()
		if n <= m || g.max.CompareAndSwap(m, n) {
			break
		}
	}
	select {
	case <-g.release:
	case <-ctx.Done():
		return intake.Receipt{}, ctx.Err()
	}
	return intake.Receipt{JobID: "job-" + s.IdempotencyKey, Attempt: 1, State: jobs.StateQueued, Queue: "core"}, nil
}

// requestAsync sends n requests at once; wait returns their replies.
func requestAsync(t *testing.T, nc *nats.Conn, n int) (wait func() []*nats.Msg) {
	t.Helper()
	var wg sync.WaitGroup
	out := make([]*nats.Msg, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			out[i], errs[i] = nc.Request(subj.Submit(), mustJSON(t, submission("c")), 20*time.Second)
		})
	}
	return func() []*nats.Msg {
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("request: %v", err)
			}
		}
		return out
	}
}

func TestNATSBoundsConcurrency(t *testing.T) {
	t.Parallel()
	g := newGate()
	e := startNATS(t, g, intake.NATSOptions{MaxInFlight: 3, Timeout: 20 * time.Second})
	t.Cleanup(g.open)
	wait := requestAsync(t, e.client, 10)
	testenv.Eventually(t, 5*time.Second, "3 submissions in flight", func() bool { return g.inflight.Load() >= 3 })
	// The other 7 were sent at once; with no bound they would be in flight by
	// now, so the maximum seen below would be above 3.
	for i := 3; i < 10; i++ {
		g.release <- struct{}{}
		testenv.Eventually(t, 5*time.Second, "the next submission to start", func() bool { return g.started.Load() > int32(i) })
	}
	g.open()
	for _, m := range wait() {
		if r := decodeReply(t, m.Data); r.err != nil {
			t.Fatal(r.err)
		}
	}
	if m := g.max.Load(); m != 3 {
		t.Fatalf("at most %d submissions ran at once, want 3", m)
	}
}

func TestNATSStopDrainsInFlight(t *testing.T) {
	t.Parallel()
	g := newGate()
	e := startNATS(t, g, intake.NATSOptions{})
	t.Cleanup(g.open)
	wait := requestAsync(t, e.client, 2)
	testenv.Eventually(t, 5*time.Second, "2 submissions in flight", func() bool { return g.inflight.Load() == 2 })

	stopped := make(chan struct{})
	go func() { e.srv.Stop(); close(stopped) }()
	// Once the intake no longer answers, its subscription is drained; Stop
	// must still be waiting for the two submissions in flight.
	testenv.Eventually(t, 5*time.Second, "the subscription to be drained", func() bool {
		_, err := e.client.Request(subj.Submit(), mustJSON(t, submission("probe")), 100*time.Millisecond)
		return errors.Is(err, nats.ErrNoResponders)
	})
	select {
	case <-stopped:
		t.Fatal("Stop returned with submissions in flight")
	default:
	}
	g.open()
	for _, m := range wait() {
		if r := decodeReply(t, m.Data); r.err != nil || r.receipt.JobID != "job-c" {
			t.Fatalf("in-flight request got %+v / %+v", r.receipt, r.err)
		}
	}
	<-stopped
	e.srv.Stop() // a second Stop returns at once
}

func TestNATSLifecycle(t *testing.T) {
	t.Parallel()
	nc := testenv.NATSConn(t, testenv.NATS(t))
	newServer := func() *intake.NATSServer {
		s, err := intake.NewNATSServer(nc, &recorder{}, intake.NATSOptions{Subjects: subj})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := newServer()
	s.Stop() // before Start
	s.Stop()
	if err := s.Start(context.Background()); err == nil {
		t.Fatal("Start after Stop: no error")
	}

	s = newServer()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Start(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Start with a cancelled context: %v", err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err == nil {
		t.Fatal("second Start: no error")
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(s.Stop) // concurrent Stops all return
	}
	wg.Wait()
}

func TestNATSQueueGroupSharesLoad(t *testing.T) {
	t.Parallel()
	ns := testenv.NATS(t)
	recs := []*recorder{{}, {}}
	for _, rec := range recs {
		srv, err := intake.NewNATSServer(testenv.NATSConn(t, ns), rec, intake.NATSOptions{Subjects: subj})
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Stop)
	}
	client := testenv.NATSConn(t, ns)
	const n = 40
	for range n {
		if _, err := client.Request(subj.Submit(), mustJSON(t, submission("q")), 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	a, b := len(recs[0].submissions()), len(recs[1].submissions())
	if a+b != n || a == 0 || b == 0 {
		t.Fatalf("servers handled %d and %d of %d requests; want each once, shared", a, b, n)
	}
}

func TestNATSOptionsValidate(t *testing.T) {
	nc := testenv.NATSConn(t, testenv.NATS(t))
	_, err := intake.NewNATSServer(nc, &recorder{}, intake.NATSOptions{
		Subjects: subjWith("a.>"), Timeout: -1, MaxInFlight: -1, DrainTimeout: -1,
	})
	if err == nil {
		t.Fatal("no error")
	}
	for _, field := range []string{"subjects", "timeout", "max_in_flight", "drain_timeout"} {
		if !strings.Contains(err.Error(), field+":") {
			t.Errorf("error does not name %s: %v", field, err)
		}
	}
	if _, err := intake.NewNATSServer(nil, &recorder{}, intake.NATSOptions{}); err == nil {
		t.Error("nil connection: no error")
	}
	if _, err := intake.NewNATSServer(nc, nil, intake.NATSOptions{}); err == nil {
		t.Error("nil Submitter: no error")
	}
	d := intake.NATSOptions{}.WithDefaults()
	if d.QueueGroup != "ballast-intake" || d.Timeout != 10*time.Second || d.MaxInFlight != 64 || d.Logger == nil {
		t.Errorf("defaults %+v", d)
	}
}
