package cli

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/workers/checkpoint"
)

// TestCheckpointOptionsFromTheConfig: a store's tuning reaches the worker's
// checkpoint options as the config wrote it, and a config that leaves it
// out gives the package's own defaults.
func TestCheckpointOptionsFromTheConfig(t *testing.T) {
	for _, c := range []struct {
		yaml string
		want checkpoint.Options
	}{
		{"checkpoints:\n  store: s3://bucket/ballast?region=eu-west-1\n",
			checkpoint.Options{Keep: checkpoint.DefaultKeep, ChunkSize: checkpoint.DefaultChunkSize,
				Concurrency: checkpoint.DefaultConcurrency, Grace: checkpoint.DefaultGrace}},
		{"checkpoints:\n  store: file:///var/lib/ck\n  keep: 5\n  chunk_size: 1MiB\n  concurrency: 2\n  grace: 2h\n",
			checkpoint.Options{Keep: 5, ChunkSize: 1 << 20, Concurrency: 2, Grace: 2 * time.Hour}},
	} {
		cfg, err := config.Parse([]byte("pools:\n  fixed: {kind: fixed, slots: 1}\n"+c.yaml), "a.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if got := checkpointOptions(cfg.Checkpoints); got.Keep != c.want.Keep || got.ChunkSize != c.want.ChunkSize ||
			got.Concurrency != c.want.Concurrency || got.Grace != c.want.Grace {
			t.Errorf("%s: options = %+v, want %+v", c.yaml, got, c.want)
		}
	}
}
