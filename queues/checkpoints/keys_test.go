package checkpoints_test

import (
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/checkpoints"
)

// TestKeysKeepTheirNames: the keys are those queues wrote before the
// ledger had a package of its own, so the checkpoints a job committed then
// stay listed; each carries the namespace's hash tag, so the commit script
// that also writes the record stays on one Redis Cluster slot.
func TestKeysKeepTheirNames(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:0"}) // never dialled
	defer rdb.Close()
	s := checkpoints.New(queues.NewStore(rdb, queues.StoreOptions{Namespace: "ns"}))
	want := []string{"{ns}:job:j:checkpoints", "{ns}:ckpt:upload_ms"}
	if got := s.AllKeys(); !slices.Equal(got, want) {
		t.Fatalf("keys\n got %q\nwant %q", got, want)
	}
}
