package workers_test

import (
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/events"
)

// TestStopAnnouncesTheWorkerLeft: a worker that drains and stops says so
// (worker.stopped, with its pool), once, after it said it was up, so that
// a release reads as a release and not as a loss; stopping twice does not
// announce it twice.
func TestStopAnnouncesTheWorkerLeft(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := &recorder{}
	o := e.options()
	o.Events = rec
	w := e.start(o)
	if up := rec.find("", events.TypeWorkerUp); len(up) != 1 {
		t.Fatalf("worker.up events %+v, want one", up)
	}
	if got := rec.find("", events.TypeWorkerStopped); len(got) != 0 {
		t.Fatalf("a running worker announced it stopped: %+v", got)
	}
	w.Stop()
	w.Stop()
	got := rec.find("", events.TypeWorkerStopped)
	if len(got) != 1 || got[0].Worker != w.ID() || got[0].Data["pool"] != o.Pool || got[0].ID == "" || got[0].Time.IsZero() {
		t.Fatalf("worker.stopped events %+v, want one for %s in pool %q", got, w.ID(), o.Pool)
	}
}
