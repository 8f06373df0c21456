package checkpoints_test

import (
	"context"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/checkpoints"
)

// newStore returns the kernel's store on a namespace of its own and the
// checkpoint ledger on it: the tests submit and move jobs through the
// kernel, as the worker and the controller do.
func newStore(t *testing.T) (*queues.Store, *checkpoints.Store) {
	t.Helper()
	rdb, ns := testenv.Redis(t)
	k := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	return k, checkpoints.New(k)
}

// submit submits a core job and returns its ID.
func submit(t *testing.T, k *queues.Store) string {
	t.Helper()
	sub, err := k.Submit(context.Background(), jobs.Spec{Template: "t", Command: []string{"true"}, Class: jobs.ClassCore,
		Rhythm: jobs.RhythmPeriodic, Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}, queues.QueueLoan)
	if err != nil {
		t.Fatal(err)
	}
	return sub.Job.ID
}
