package workers

import (
	"context"
	"os"
	"path/filepath"
	"time"
)

// pruneLogs deletes local job log files older than the retention, so a
// long-lived worker's log directory does not grow without bound. Redis keeps
// the last lines of every job for the same retention.
func (w *Worker) pruneLogs(now time.Time) int {
	entries, err := os.ReadDir(w.opts.LogDir)
	if err != nil {
		return 0
	}
	cutoff := now.Add(-w.opts.LogRetention)
	n := 0
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || e.IsDir() || info.ModTime().After(cutoff) {
			continue
		}
		if os.Remove(filepath.Join(w.opts.LogDir, e.Name())) == nil {
			n++
		}
	}
	return n
}

// janitorLoop prunes logs at start and then hourly.
func (w *Worker) janitorLoop(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if n := w.pruneLogs(w.opts.Now()); n > 0 {
			w.log.Info("pruned old job logs", "files", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
