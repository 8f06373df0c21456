package cli

import (
	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/workers/checkpoint"
)

// checkpointOptions is a config's checkpoint store tuning as package
// checkpoint takes it. It lives here, not in the config, so that reading a
// config never links the cloud SDKs package checkpoint opens stores with.
func checkpointOptions(c config.CheckpointsConfig) checkpoint.Options {
	return checkpoint.Options{Keep: c.Keep, ChunkSize: int64(c.ChunkSize), Concurrency: c.Concurrency, Grace: c.Grace.Std()}
}
