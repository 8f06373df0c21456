package eventbus_test

import (
	"sync"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/model/events"
)

// Every job event names its job to OnJobChange, whatever its type; worker
// events and bodies that do not decode name nothing.
func TestOnJobChangeNamesEveryJobEvent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	var got []string
	sub, err := eventbus.OnJobChange(e.nc, e.subj, func(id string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, id)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	// The server has the subscription before the other connection
	// publishes.
	if err := e.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := e.nc.Publish(e.subj.Job("junk"), []byte("not json")); err != nil {
		t.Fatal(err)
	}
	for i, typ := range []events.Type{events.TypeJobRunning, events.TypeJobCheckpoint, events.TypeWorkerUp, events.TypeJobRequeued} {
		ev := jobEvent("j1", i, typ)
		if typ.IsWorker() {
			ev.JobID = ""
		}
		if err := e.otherPub.Publish(ctxT(t), ev); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, 5*time.Second, "three job events named", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= 3
	})
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 || got[0] != "j1" || got[2] != "j1" {
		t.Fatalf("named %v, want j1 three times", got)
	}
}
