package redisinfo

import "github.com/ballastdev/ballast/queues"

// Store reads what the Redis under a queues.Kernel is: its durability
// settings and its topology.
type Store struct{ k queues.Kernel }

// New returns the reader of the Redis k runs on.
func New(k queues.Kernel) *Store { return &Store{k: k} }
