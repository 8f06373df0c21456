package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/queues"
)

// devEvents prints what `ballast dev` sees happen, one readable line per
// meaningful event, with the job's template so a reader need not look the
// ID up. Checkpoints, which a steps job writes every step, are shown only
// when verbose; everything else the processes log goes to the log file.
type devEvents struct {
	w       io.Writer
	verbose bool
	store   *queues.Store // where a job's template is read, once per job

	mu        sync.Mutex
	templates map[string]string
}

func (d *devEvents) subscribe(nc *nats.Conn, subj events.Subjects) error {
	_, err := nc.Subscribe(subj.All(), func(m *nats.Msg) {
		var ev events.Event
		if json.Unmarshal(m.Data, &ev) != nil {
			return
		}
		if l := d.line(ev); l != "" {
			d.mu.Lock()
			fmt.Fprintln(d.w, l)
			d.mu.Unlock()
		}
	})
	return err
}

// template names a job's template, from the store the first time the job
// is seen; "-" when it cannot be read.
func (d *devEvents) template(id string) string {
	d.mu.Lock()
	t, ok := d.templates[id]
	d.mu.Unlock()
	if ok {
		return t
	}
	t = "-"
	if d.store != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if j, err := d.store.Get(ctx, id); err == nil && j.Spec.Template != "" {
			t = j.Spec.Template
		}
		cancel()
	}
	d.mu.Lock()
	if d.templates == nil {
		d.templates = map[string]string{}
	}
	d.templates[id] = t
	d.mu.Unlock()
	return t
}

// line renders ev, or "" for an event not worth a line.
func (d *devEvents) line(ev events.Event) string {
	at := ev.Time.Local().Format("15:04:05")
	why := ""
	if ev.Reason != "" {
		why = ": " + ev.Reason
	}
	switch {
	case ev.Type.IsPipeline():
		return fmt.Sprintf("%s  pipeline %s %s%s", at, ev.Pipeline, strings.TrimPrefix(string(ev.Type), "pipeline."), why)
	case ev.Type.IsSweep():
		return fmt.Sprintf("%s  sweep %s %s%s", at, ev.SweepID, strings.TrimPrefix(string(ev.Type), "sweep."), why)
	case ev.Type == events.TypeWorkerUp:
		return fmt.Sprintf("%s  worker %s up%s", at, ev.Worker, poolNote(ev))
	case ev.Type == events.TypeWorkerStopped:
		return fmt.Sprintf("%s  worker %s drained and stopped%s", at, ev.Worker, poolNote(ev))
	case ev.Type == events.TypeWorkerLost:
		return fmt.Sprintf("%s  worker %s lost%s", at, ev.Worker, why)
	case ev.JobID == "":
		return ""
	case ev.Type == events.TypeJobCheckpoint && !d.verbose:
		return ""
	}
	var what string
	switch ev.Type {
	case events.TypeJobQueued:
		what = "queued in " + dash(ev.Queue)
	case events.TypeJobRunning:
		what = fmt.Sprintf("running on %s (%s)", dash(ev.Worker), runDeliveryText(ev.Runs, ev.Attempt))
	case events.TypeJobCheckpoint:
		what = "checkpoint " + events.CheckpointToken(ev)
	case events.TypeJobRequeued:
		what = fmt.Sprintf("requeued to %s as delivery %d%s", dash(ev.Queue), ev.Attempt, why)
		if ev.Runs > 0 {
			what = fmt.Sprintf("requeued to %s as delivery %d after run %d%s", dash(ev.Queue), ev.Attempt, ev.Runs, why)
		}
	case events.TypeJobSucceeded:
		what = "succeeded"
	case events.TypeJobFailed:
		what = "failed" + why
	case events.TypeJobCancelled:
		what = "cancelled" + why
	case events.TypeJobMoved:
		// A delivery that never ran: the attempt counter moves, the job
		// did not run again.
		what = fmt.Sprintf("moved to %s as delivery %d, not yet run%s", dash(ev.Queue), ev.Attempt, why)
	case events.TypeJobOverflowed:
		what = "overflowed to on-demand" + why
	default:
		what = string(ev.Type) + why
	}
	return fmt.Sprintf("%s  %-16s %s %s", at, d.template(ev.JobID), ev.JobID, what)
}

// poolNote names the pool (and slots) a worker event carries, if any.
func poolNote(ev events.Event) string {
	info, _ := events.ParseWorkerInfo(ev)
	if info.Pool == "" {
		return ""
	}
	if ev.Type == events.TypeWorkerUp {
		return fmt.Sprintf(" (%s, %s)", info.Pool, plural(info.Slots, "slot"))
	}
	return " (" + info.Pool + ")"
}

// plural is "1 slot", "2 slots".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
