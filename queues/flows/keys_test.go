package flows_test

import (
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/flows"
)

// TestKeysKeepTheirNames: the keys are those queues wrote before flows
// had a package of its own, so runs and sweeps recorded then stay
// readable; every one carries the namespace's hash tag, so a script that
// touches several stays on one Redis Cluster slot.
func TestKeysKeepTheirNames(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:0"}) // never dialled
	defer rdb.Close()
	s := flows.New(queues.NewStore(rdb, queues.StoreOptions{Namespace: "ns"}))
	want := []string{"{ns}:sweep:s", "{ns}:sweep:s:trials", "{ns}:sweep:s:specs", "{ns}:sweep:s:stopped", "{ns}:sweeps",
		"{ns}:sweeps:active", "{ns}:idem-sweep:k", "{ns}:run:r", "{ns}:runs:active", "{ns}:pipeline:p:runs",
		"{ns}:pipeline:p:handled", "{ns}:fired:d"}
	if got := s.AllKeys(); !slices.Equal(got, want) {
		t.Fatalf("keys\n got %q\nwant %q", got, want)
	}
}
