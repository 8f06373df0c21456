package insight_test

import (
	"math"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/advisor"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
)

// TestWindowCountsHoursOverTheKnownPartOnly: a template's hours a day are
// taken over the stretch Ballast is known to have run in, and a template
// seen for less than a day gets Days 0, which the advisor leaves alone.
func TestWindowCountsHoursOverTheKnownPartOnly(t *testing.T) {
	t.Parallel()
	r, src, end := oneHourOfETL(t)

	// Seen for half an hour before the job: less than a day known.
	if err := r.acct.RecordSample(r.ctx, advisor.SeriesFixedIdle, at(-30), 0.5, 30*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	win, err := src.Window(r.ctx, end.Add(-72*time.Hour), end)
	if err != nil || len(win.Templates) != 1 || win.Templates[0].Days != 0 {
		t.Fatalf("fresh: %v %+v", err, win.Templates)
	}
	// An idle sample 49 h before the job's end: two days known, and the
	// hour ran over 49 hours, 24/49 h a day.
	if err := r.acct.RecordSample(r.ctx, advisor.SeriesFixedIdle, end.Add(-49*time.Hour), 0.5, 30*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	win, err = src.Window(r.ctx, end.Add(-72*time.Hour), end)
	if err != nil || len(win.Templates) != 1 {
		t.Fatalf("%v %+v", err, win.Templates)
	}
	if tp := win.Templates[0]; tp.Days != 2 || math.Abs(tp.ActiveHoursPerDay-24.0/49) > 1e-9 {
		t.Fatalf("template %+v, want 2 days and %.4f h/day", tp, 24.0/49)
	}
}

func TestWindowCountsHoursFromTheRecordedStart(t *testing.T) {
	t.Parallel()
	r, src, end := oneHourOfETL(t)
	// No idle sample, only the job, but a controller first led 73 hours
	// before the job's end: three days known, one hour over 73.
	if _, err := r.store.MarkStarted(r.ctx, end.Add(-73*time.Hour)); err != nil {
		t.Fatal(err)
	}
	win, err := src.Window(r.ctx, end.Add(-96*time.Hour), end)
	if err != nil || len(win.Templates) != 1 {
		t.Fatalf("%v %+v", err, win.Templates)
	}
	if tp := win.Templates[0]; tp.Days != 3 || math.Abs(tp.ActiveHoursPerDay-24.0/73) > 1e-9 {
		t.Fatalf("template %+v, want 3 days and %.4f h/day", tp, 24.0/73)
	}
}

// oneHourOfETL is a rig whose fixed worker ran one hour of "etl", ending
// at the returned time, and a source over it.
func oneHourOfETL(t *testing.T) (*rig, insight.Source, time.Time) {
	t.Helper()
	r := newRig(t)
	src := insight.Source{Store: r.store, Accounting: r.acct, Pools: pools(), Quota: map[string]int{"onprem": 2}}
	w := queues.WorkerInfo{ID: "fixed-1", Pool: "onprem", Slots: 2, StartedAt: at(-10)}
	r.beat(0, w)
	id := r.submit(0, "etl", jobs.ClassCore)
	r.finish(60, r.claim(0, id, 1, w.ID))
	return r, src, at(60)
}
