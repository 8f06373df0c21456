package flows_test

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/flows"
)

// clock is the tests' hand-moved clock.
type clock = testenv.Clock

// newStores returns a job store on a namespace of its own and the flows
// store built on it, as the command layer builds them.
func newStores(t *testing.T) (*flows.Store, *queues.Store, *clock) {
	t.Helper()
	rdb, ns := testenv.Redis(t)
	c := testenv.NewClock(time.Now())
	js := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns, Now: c.Now, Retention: time.Hour})
	return flows.New(js), js, c
}

func spec(key string) jobs.Spec {
	return jobs.Spec{Template: "t", Command: []string{"true"}, Class: jobs.ClassCore, Rhythm: jobs.RhythmPeriodic,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second), IdempotencyKey: key}
}
