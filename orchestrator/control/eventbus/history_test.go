package eventbus_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/model/events"
)

func TestHistoryReadsEachJobInOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 25
	var wantA, wantB []events.Event
	for i := range n {
		a := jobEvent("ja", i, events.TypeJobCheckpoint)
		b := jobEvent("jb", i, events.TypeJobCheckpoint)
		wantA, wantB = append(wantA, a), append(wantB, b)
		for _, ev := range []events.Event{a, b} {
			if err := e.pub.Publish(ctxT(t), ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A worker event shares the stream but not a job's subject.
	if err := e.pub.Publish(ctxT(t), events.Event{ID: "wu", Type: events.TypeWorkerUp, Worker: "w1", JobID: "ja", Time: t0}); err != nil {
		t.Fatal(err)
	}
	e.waitStored(t, 2*n+1)

	for job, want := range map[string][]events.Event{"ja": wantA, "jb": wantB} {
		got, err := eventbus.History(ctxT(t), e.js, streamName, e.subj, job)
		if err != nil {
			t.Fatalf("%s: %v", job, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: history %v, want %v", job, ids(got), ids(want))
		}
	}
}

func TestHistoryDedupesByID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	first := jobEvent("j1", 1, events.TypeJobRunning)
	for range 2 {
		if err := e.pub.Publish(ctxT(t), first); err != nil {
			t.Fatal(err)
		}
	}
	// The server handles one connection's messages in order, so once this
	// one is stored the duplicate has been judged.
	if err := e.pub.Publish(ctxT(t), jobEvent("j1", 2, events.TypeJobSucceeded)); err != nil {
		t.Fatal(err)
	}
	e.waitStored(t, 2)
	got, err := eventbus.History(ctxT(t), e.js, streamName, e.subj, "j1")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"j1-1", "j1-2"}; !reflect.DeepEqual(ids(got), want) {
		t.Fatalf("history %v, want %v", ids(got), want)
	}
}

func TestHistoryOfUnknownJobIsEmpty(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := e.pub.Publish(ctxT(t), jobEvent("j1", 1, events.TypeJobQueued)); err != nil {
		t.Fatal(err)
	}
	e.waitStored(t, 1)
	got, err := eventbus.History(ctxT(t), e.js, streamName, e.subj, "nope")
	if err != nil || len(got) != 0 {
		t.Fatalf("got %v, %v; want an empty history", got, err)
	}
}

func TestHistorySkipsForeignMessages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := e.nc.Publish(e.subj.Job("j1"), []byte("not json")); err != nil {
		t.Fatal(err)
	}
	if err := e.pub.Publish(ctxT(t), jobEvent("j1", 1, events.TypeJobQueued)); err != nil {
		t.Fatal(err)
	}
	// The last stored message is the foreign one: History must still stop.
	if err := e.nc.Publish(e.subj.Job("j1"), []byte(`{"id":""}`)); err != nil {
		t.Fatal(err)
	}
	e.waitStored(t, 3)
	got, err := eventbus.History(ctxT(t), e.js, streamName, e.subj, "j1")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"j1-1"}; !reflect.DeepEqual(ids(got), want) {
		t.Fatalf("history %v, want %v", ids(got), want)
	}
}

func TestHistoryErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, err := eventbus.History(ctxT(t), e.js, "MISSING", e.subj, "j1")
	if !errors.Is(err, jetstream.ErrStreamNotFound) || !strings.Contains(err.Error(), "is one running?") {
		t.Errorf("missing stream: %v", err)
	}
	if _, err := eventbus.History(ctxT(t), e.js, streamName, e.subj, "j.>"); err == nil {
		t.Error("wildcard job id: no error")
	}
	if _, err := eventbus.History(ctxT(t), nil, streamName, e.subj, "j1"); err == nil {
		t.Error("nil JetStream: no error")
	}
}
