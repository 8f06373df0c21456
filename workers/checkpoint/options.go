package checkpoint

import (
	"time"

	"github.com/ballastdev/ballast/workers/checkpoint/storespec"
)

// Defaults of Options: the config's (see storespec).
const (
	DefaultKeep        = storespec.DefaultKeep
	DefaultChunkSize   = storespec.DefaultChunkSize
	DefaultConcurrency = storespec.DefaultConcurrency
	DefaultGrace       = storespec.DefaultGrace
)

// Options tune saves and restores. The zero value takes the defaults.
type Options struct {
	// Keep is how many committed checkpoints the ledger keeps per job.
	Keep int
	// ChunkSize is the size of a file's chunks (the last one is shorter).
	// Fixed chunks suit checkpoints: a changed file is usually rewritten
	// whole, and an unchanged one keeps every chunk.
	ChunkSize int64
	// Concurrency bounds the chunks in flight to or from the store (and
	// so the memory: up to Concurrency+2 chunk buffers).
	Concurrency int
	// Grace is the collector's: a chunk or manifest no commit names is
	// deleted only once older than this (see Collect).
	Grace time.Duration
	// MaxUploadAge is how long a save may run before it must give up
	// without committing: Grace/2 unless set, and never more than that
	// (see Collect for why).
	MaxUploadAge time.Duration
	// Now is the clock (time.Now unless set).
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Keep < 1 {
		o.Keep = DefaultKeep
	}
	if o.ChunkSize <= 0 {
		o.ChunkSize = DefaultChunkSize
	}
	if o.Concurrency < 1 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.MaxUploadAge <= 0 || o.MaxUploadAge > o.Grace/2 {
		o.MaxUploadAge = o.Grace / 2
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
