package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// storedEventIDs reads the ID of every event the stream holds.
func storedEventIDs(ctx context.Context, t *testing.T, js jetstream.JetStream, stream string) map[string]bool {
	t.Helper()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	n := s.CachedInfo().State.Msgs
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for uint64(len(ids)) < n {
		batch, err := cons.Fetch(500, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for m := range batch.Messages() {
			var e events.Event
			if json.Unmarshal(m.Data(), &e) == nil {
				ids[e.ID] = true
			}
			got++
		}
		if got == 0 {
			break
		}
	}
	return ids
}

// TestNATSClusterLosesANode: the event stream on a 3-node NATS cluster
// with 3 replicas, the intake and the clients connected with every node's
// URL. The node the intake is connected to is stopped mid-run: every
// submission is still answered (the clients retry with the same keys, the
// intake reconnects), every answered one is recorded once, and every event
// the stream held before the loss is still there, with new ones after it.
func TestNATSClusterLosesANode(t *testing.T) {
	t.Parallel()
	cluster := testenv.NATSCluster(t, 3)
	urls := testenv.URLs(cluster)
	connect := func(name string) *nats.Conn {
		// The intake's connection prefers node 0, the one that is stopped.
		nc, err := nats.Connect(urls, nats.Name(name), nats.DontRandomize(), nats.MaxReconnects(-1),
			nats.ReconnectWait(100*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	subj := events.Subjects{Prefix: ns}
	stream := "EV_" + ns
	ctl := connect("intake")
	js, err := jetstream.New(ctl)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	testenv.Eventually(t, 20*time.Second, "the replicated stream created", func() bool {
		return eventbus.EnsureReplicatedStream(ctx, js, stream, subj, time.Hour, 3) == nil
	})
	// Events go out with core NATS, which a stream still electing its
	// leader drops: wait until it stores an acknowledged one.
	testenv.Eventually(t, 20*time.Second, "the stream's leader", func() bool {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err := js.Publish(pctx, subj.Worker("probe"), []byte(`{"id":"probe","type":"worker.up","worker":"probe","time":"2026-01-01T00:00:00Z"}`))
		return err == nil
	})
	cat, err := jobs.NewCatalog(map[string]jobs.Template{"t": {Command: []string{"true"}, Class: jobs.ClassCore}})
	if err != nil {
		t.Fatal(err)
	}
	sub := &controller.Submitter{Catalog: cat, Store: store, Events: eventbus.NewNATSPublisher(ctl, subj), Logger: quietLogger()}
	in, err := intake.NewNATSServer(ctl, sub, intake.NATSOptions{Subjects: subj, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Stop)
	if got := ctl.ConnectedUrl(); got != cluster[0].ClientURL() {
		t.Fatalf("the intake is on %s, want node 0 (%s)", got, cluster[0].ClientURL())
	}

	const n, clients = 300, 4
	var answered atomic.Int64
	ids := make([]string, n)
	errs := make([]error, n)
	// The second two thirds wait for the node loss, so that it falls in
	// the middle of the run.
	lost := make(chan struct{})
	var wg sync.WaitGroup
	for c := range clients {
		cl := client.NewNATS(connect(fmt.Sprintf("client-%d", c)), subj)
		cl.Options = client.Options{Retries: 20, Timeout: 2 * time.Second}
		wg.Go(func() {
			for i := c; i < n; i += clients {
				if i >= n/3 {
					<-lost
				}
				r, err := cl.Submit(ctx, jobs.Submission{Template: "t", IdempotencyKey: fmt.Sprintf("k-%d", i)})
				ids[i], errs[i] = r.JobID, err
				answered.Add(1)
			}
		})
	}
	testenv.Eventually(t, 30*time.Second, "a third of the submissions answered", func() bool { return answered.Load() >= n/3 })
	// What the stream holds once it stops growing is what must survive.
	last := uint64(0)
	testenv.Eventually(t, 10*time.Second, "the stream settled", func() bool {
		time.Sleep(200 * time.Millisecond)
		s, err := js.Stream(ctx, stream)
		if err != nil {
			return false
		}
		n := s.CachedInfo().State.Msgs
		settled := n == last && n > 1
		last = n
		return settled
	})
	before := storedEventIDs(ctx, t, js, stream)
	cluster[0].Shutdown()
	cluster[0].WaitForShutdown()
	close(lost)
	wg.Wait()

	seen := map[string]int{}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("submission %d not answered after the node loss: %v", i, errs[i])
		}
		seen[ids[i]]++
	}
	if len(seen) != n {
		t.Fatalf("%d jobs for %d keys", len(seen), n)
	}
	list, err := store.List(ctx, queues.ListOptions{Limit: 1000})
	if err != nil || len(list) != n {
		t.Fatalf("%d jobs on record (%v), want %d", len(list), err, n)
	}
	// Read until every event stored before the loss is there: just after
	// a leader change a read may be served before the new leader has
	// caught up with what it acknowledged. An event truly lost never
	// shows, and the wait times out.
	var after map[string]bool
	missing := ""
	deadline := time.Now().Add(20 * time.Second)
	readAfter := func() bool {
		js2, err := jetstream.New(ctl)
		if err != nil {
			return false
		}
		s, err := js2.Stream(ctx, stream)
		if err != nil {
			return false
		}
		if s.CachedInfo().State.Msgs <= uint64(len(before)) {
			return false // new events too, not only the old
		}
		after = storedEventIDs(ctx, t, js2, stream)
		missing = ""
		for id := range before {
			if !after[id] {
				missing = id
				break
			}
		}
		return missing == ""
	}
	for !readAfter() {
		if time.Now().After(deadline) {
			if missing != "" {
				t.Fatalf("event %s, stored before the node was lost, is gone", missing)
			}
			t.Fatal("the stream was not readable on the remaining nodes within 20s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("stream held %d events before the loss of a node, %d after; %d submissions answered, %d jobs on record",
		len(before), len(after), n, len(list))
}
