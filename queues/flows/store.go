package flows

import (
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/queues"
)

// Kernel is what the flows store builds on: the job store's kernel and
// how long its idempotency keys hold, since a sweep's key must map to its
// sweep exactly as long as a job's key maps to its job.
type Kernel interface {
	queues.Kernel
	IdempotencyTTL() time.Duration
}

// Store keeps pipeline runs and sweeps in the namespace of its kernel.
type Store struct {
	k      Kernel
	rdb    redis.UniversalClient
	prefix string
}

// New returns the flows store of k's namespace.
func New(k Kernel) *Store {
	return &Store{k: k, rdb: k.Redis(), prefix: k.Namespace().Prefix()}
}

// atoi is s as an int, 0 when it is not one.
func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
