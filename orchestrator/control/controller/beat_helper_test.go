package controller_test

import (
	"context"
	"testing"
	"time"

	"github.com/ballastdev/ballast/queues"
)

// beater returns a heartbeat for the tests' workers, as a worker of pool
// with slots would send it running the deliveries given; every worker
// started at started, so its billed time is what the test sets.
func beater(t *testing.T, store *queues.Store, started time.Time) func(id, pool string, slots int, running ...queues.Delivery) {
	return func(id, pool string, slots int, running ...queues.Delivery) {
		t.Helper()
		w := queues.WorkerInfo{ID: id, Pool: pool, Slots: slots, Busy: len(running), StartedAt: started}
		if _, err := store.Heartbeat(context.Background(), w, running); err != nil {
			t.Fatal(err)
		}
	}
}
