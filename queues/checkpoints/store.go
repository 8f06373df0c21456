package checkpoints

import "github.com/ballastdev/ballast/queues"

// Store keeps the checkpoint ledger of a namespace. It reaches Redis only
// through its Kernel.
type Store struct{ k queues.Kernel }

// New returns the checkpoint ledger of k's namespace.
func New(k queues.Kernel) *Store { return &Store{k: k} }

// list is the list of the job's committed manifest keys, beside its record.
func (s *Store) list(jobID string) string { return s.k.Namespace().Job(jobID) + ":checkpoints" }

// uploads lists the newest upload times in milliseconds, newest first.
func (s *Store) uploads() string { return s.k.Namespace().Prefix() + "ckpt:upload_ms" }
