package registry

import "github.com/ballastdev/ballast/queues"

// Store reads the worker registry and records intents through a
// queues.Kernel.
type Store struct{ k queues.Kernel }

// New returns the registry of k's namespace.
func New(k queues.Kernel) *Store { return &Store{k: k} }
