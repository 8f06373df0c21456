package telemetry

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ballastdev/ballast/orchestrator/model/events"
)

// TransferBuckets are the upper bounds, in seconds, of the checkpoint
// upload and restore histograms: from a few small files on loopback to a
// large model over a slow link.
var TransferBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800}

// checkpointCounters measure checkpoints that travel through a store, from
// the workers' events: what moves, how long it takes, and how often a
// job resumes from less than its newest checkpoint.
type checkpointCounters struct {
	uploaded, restored metric.Int64Counter
	upload, restore    metric.Float64Histogram
	refused, fallbacks metric.Int64Counter
}

func (c *checkpointCounters) create(meter metric.Meter, ns string) error {
	var e [6]error
	c.uploaded, e[0] = meter.Int64Counter(ns+".checkpoint.uploaded",
		metric.WithUnit("By"),
		metric.WithDescription("Bytes of committed checkpoints written to the checkpoint store (chunks the store already held count nothing)."))
	c.restored, e[1] = meter.Int64Counter(ns+".checkpoint.restored",
		metric.WithUnit("By"),
		metric.WithDescription("Bytes read from the checkpoint store to restore checkpoints before attempts started (files already in place count nothing)."))
	c.upload, e[2] = meter.Float64Histogram(ns+".checkpoint.upload_duration",
		metric.WithUnit("s"),
		metric.WithDescription("Time from a job's checkpoint report to its commit: scan, upload, manifest and commit."),
		metric.WithExplicitBucketBoundaries(TransferBuckets...))
	c.restore, e[3] = meter.Float64Histogram(ns+".checkpoint.restore_duration",
		metric.WithUnit("s"),
		metric.WithDescription("Time a worker took to put a committed checkpoint in place before an attempt started."),
		metric.WithExplicitBucketBoundaries(TransferBuckets...))
	c.refused, e[4] = meter.Int64Counter(ns+".checkpoint.refused",
		metric.WithUnit("{commit}"),
		metric.WithDescription("Checkpoint commits refused because the attempt had moved on: a worker cut off, then back."))
	c.fallbacks, e[5] = meter.Int64Counter(ns+".checkpoint.fallbacks",
		metric.WithUnit("{fallback}"),
		metric.WithDescription("Attempts that resume from an older checkpoint than the job last reported, by cause (corrupt, unfinished, none)."))
	return errors.Join(e[:]...)
}

// observeCheckpoint records a checkpoint event; false for other events.
func (m *Metrics) observeCheckpoint(e events.Event) bool {
	ctx := context.Background()
	if t, ok := events.ParseCheckpointTransfer(e); ok {
		if e.Type == events.TypeJobCheckpointRestored {
			m.ckpt.restored.Add(ctx, t.Bytes)
			m.ckpt.restore.Record(ctx, t.Duration.Seconds())
		} else {
			m.ckpt.uploaded.Add(ctx, t.Bytes)
			m.ckpt.upload.Record(ctx, t.Duration.Seconds())
		}
		return true
	}
	if s, ok := events.ParseCheckpointSetback(e); ok {
		if e.Type == events.TypeJobCheckpointRefused {
			m.ckpt.refused.Add(ctx, 1)
		} else {
			m.ckpt.fallbacks.Add(ctx, 1, metric.WithAttributes(attribute.String("cause", s.Cause)))
		}
		return true
	}
	return false
}
