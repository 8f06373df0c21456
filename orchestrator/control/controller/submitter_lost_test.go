package controller_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// TestSubmitWhoseReplyWasLostIsAnnounced: a submit that Redis carried out
// but whose reply was lost returns an error and announces nothing; the
// client's retry with the same key finds the job and announces it, under
// the same event ID, so the stream holds one job.queued.
func TestSubmitWhoseReplyWasLostIsAnnounced(t *testing.T) {
	t.Parallel()
	direct, ns := testenv.Redis(t)
	proxy := testenv.NewLossyProxy(t, direct.Options().Addr)
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	srv := testenv.NATS(t)
	nc := testenv.NATSConn(t, srv)
	subj := events.Subjects{Prefix: ns}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := eventbus.EnsureStream(ctx, js, "EV_"+ns, subj, time.Hour); err != nil {
		t.Fatal(err)
	}
	live := testenv.CollectEvents(t, nc, subj.All())
	sub := &controller.Submitter{Store: queues.NewStore(rdb, queues.StoreOptions{Namespace: ns}),
		Events: eventbus.NewNATSPublisher(nc, subj)}
	spec := func(key string) jobs.Spec {
		return jobs.Spec{Template: "t", Command: []string{"true"}, Class: jobs.ClassBurst,
			Timeout: jobs.Duration(time.Minute), IdempotencyKey: key}
	}
	// One submit first, so the proxy loses the script's reply and not a
	// NOSCRIPT error that makes go-redis send the script again.
	if _, _, err := sub.SubmitSpec(ctx, spec("warm-up")); err != nil {
		t.Fatal(err)
	}

	key := "lost-" + testenv.RandomHex(4)
	proxy.LoseNextReply([]byte(key))
	if _, _, err := sub.SubmitSpec(ctx, spec(key)); err == nil {
		t.Fatal("the first submit returned no error though its reply was lost")
	}
	if proxy.Lost() != 1 {
		t.Fatalf("the proxy lost %d replies, want 1", proxy.Lost())
	}
	j, dup, err := sub.SubmitSpec(ctx, spec(key))
	if err != nil || !dup {
		t.Fatalf("retried submit: dup %v, err %v", dup, err)
	}
	queued := func(e events.Event) bool { return e.JobID == j.ID && e.Type == events.TypeJobQueued }
	testenv.Eventually(t, 5*time.Second, "job.queued of the job whose first reply was lost", func() bool { return live.Any(queued) })

	// A second retry announces again; the stream keeps one.
	if _, _, err := sub.SubmitSpec(ctx, spec(key)); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	var hist []events.Event
	testenv.Eventually(t, 5*time.Second, "the job's history", func() bool {
		hist, err = eventbus.History(ctx, js, "EV_"+ns, subj, j.ID)
		return err == nil && len(hist) > 0
	})
	time.Sleep(100 * time.Millisecond) // a second copy, if stored, lands by now
	if hist, err = eventbus.History(ctx, js, "EV_"+ns, subj, j.ID); err != nil || len(hist) != 1 || !queued(hist[0]) {
		t.Fatalf("stored history %+v (%v), want one job.queued", hist, err)
	}
}
