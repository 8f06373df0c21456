package eventbus_test

import (
	"context"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/model/events"
)

func TestWatchReceivesLiveEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := eventbus.Watch(ctx, e.nc, e.subj, "j1")
	if err != nil {
		t.Fatal(err)
	}
	// Published from another connection: Watch must have registered its
	// subscription with the server before returning.
	want := jobEvent("j1", 1, events.TypeJobQueued)
	if err := e.otherPub.Publish(ctx, want); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, ch); got.ID != want.ID || !got.Time.Equal(want.Time) || got.Type != want.Type || got.Data["n"] != float64(1) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	// Neither another job's event nor a foreign message reaches the watcher.
	if err := e.pub.Publish(ctx, jobEvent("j2", 1, events.TypeJobQueued)); err != nil {
		t.Fatal(err)
	}
	if err := e.nc.Publish(e.subj.Job("j1"), []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	if err := e.pub.Publish(ctx, jobEvent("j1", 2, events.TypeJobRunning)); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, ch); got.ID != "j1-2" {
		t.Fatalf("got %s, want j1-2", got.ID)
	}
	cancel()
	waitClosed(t, ch)
}

func TestWatchEndsWhenConnectionCloses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ch, err := eventbus.Watch(context.Background(), e.nc, e.subj, "j1")
	if err != nil {
		t.Fatal(err)
	}
	e.nc.Close()
	waitClosed(t, ch)
}

func TestWatchRefusesBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := eventbus.Watch(context.Background(), e.nc, e.subj, "*"); err == nil {
		t.Error("wildcard job id: no error")
	}
	if _, err := eventbus.Watch(context.Background(), nil, e.subj, "j1"); err == nil {
		t.Error("nil connection: no error")
	}
}

func TestFollowReplaysHistoryThenLiveOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := 1; i <= 2; i++ {
		if err := e.pub.Publish(ctxT(t), jobEvent("j1", i, events.TypeJobCheckpoint)); err != nil {
			t.Fatal(err)
		}
	}
	e.waitStored(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := eventbus.Follow(ctx, e.nc, e.js, streamName, e.subj, "j1")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"j1-1", "j1-2"} {
		if got := receive(t, ch); got.ID != want {
			t.Fatalf("got %s, want %s", got.ID, want)
		}
	}
	// A republished old event is not shown again; a new one is.
	for _, ev := range []events.Event{jobEvent("j1", 2, events.TypeJobCheckpoint), jobEvent("j1", 3, events.TypeJobSucceeded)} {
		if err := e.pub.Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	if got := receive(t, ch); got.ID != "j1-3" {
		t.Fatalf("got %s, want j1-3", got.ID)
	}
	cancel()
	waitClosed(t, ch)
}

func TestFollowFailsWithoutStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := eventbus.Follow(context.Background(), e.nc, e.js, "MISSING", e.subj, "j1"); err == nil {
		t.Fatal("no error")
	}
}
