package registry_test

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
)

// clock is the tests' hand-moved clock.
type clock = testenv.Clock

// newStore returns a registry and the kernel it reads, in a namespace of
// the test's own. Workers register through the kernel (Register,
// Heartbeat), as they do in production.
func newStore(t *testing.T) (*registry.Store, *queues.Store, *clock) {
	t.Helper()
	rdb, ns := testenv.Redis(t)
	c := testenv.NewClock(time.Now())
	k := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns, Now: c.Now})
	return registry.New(k), k, c
}
