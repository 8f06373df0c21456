package usage

import (
	"time"

	"github.com/ballastdev/ballast/queues"
)

// Store reads and keeps the accounting of one namespace: usage entries,
// worker lives, pending launches and sampled series (see doc.go).
type Store struct {
	k queues.Kernel
}

// New returns the usage store of k's namespace. It keeps nothing of its
// own: every call reads Redis through k.
func New(k queues.Kernel) *Store { return &Store{k: k} }

func msUTC(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
