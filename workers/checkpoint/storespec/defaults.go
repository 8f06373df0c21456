package storespec

import "time"

// Defaults of a store's tuning, where the config leaves it out.
const (
	// DefaultKeep committed checkpoints per job: a restore that finds the
	// newest corrupt falls back to the ones before.
	DefaultKeep = 3
	// DefaultChunkSize is the size files are cut into for upload.
	DefaultChunkSize = 8 << 20
	// DefaultConcurrency is the chunks in flight per upload or restore.
	DefaultConcurrency = 8
	// DefaultGrace is how old an object no kept checkpoint names must be
	// before the collector deletes it.
	DefaultGrace = 24 * time.Hour
)
