package workers

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/sweep"
	"github.com/ballastdev/ballast/queues/logs"
)

// maxLineBytes bounds one output line; a longer one is cut into pieces so a
// job printing a huge blob cannot exhaust the worker's memory.
const maxLineBytes = 64 << 10

// output collects a job's stdout and stderr: every line goes to the local log
// file and, batched, to the job's log in Redis; stdout lines that are JSON
// objects with a "checkpoint" key are reported as checkpoints, and those with
// the job's metric key (when it has one) as metric values.
type output struct {
	store        LogAppender
	jobID        string
	attempt      int
	keep         int64
	onCheckpoint func(string)
	// metric is the key of the job's metric ("" = none: lines are not
	// parsed for it). onMetric is called synchronously, in the order the
	// lines were printed: the value is recorded before the next line is
	// read, so every value printed before the process exited is recorded
	// before the worker finishes the job.
	metric   string
	onMetric func(float64)

	mu      sync.Mutex
	pending []logs.Line
	dir     string
	file    *os.File // opened at the first line: most no-op jobs print nothing
	// The loop that sends lines to Redis starts at the first line too: a
	// job that prints nothing costs no goroutine and no ticker.
	looping, closed bool
	done            chan struct{}
	flushed         chan struct{}
}

func newOutput(store LogAppender, dir, jobID string, attempt int, keep int64, onCheckpoint func(string),
	metric string, onMetric func(float64)) *output {
	o := &output{store: store, jobID: jobID, attempt: attempt, keep: keep, onCheckpoint: onCheckpoint,
		metric: metric, onMetric: onMetric, dir: dir, done: make(chan struct{}), flushed: make(chan struct{})}
	return o
}

// writer returns an io.Writer for one stream ("stdout" or "stderr").
func (o *output) writer(stream string) *lineWriter {
	return &lineWriter{emit: func(line string) { o.line(stream, line) }}
}

func (o *output) line(stream, text string) {
	o.mu.Lock()
	o.pending = append(o.pending, logs.Line{Attempt: o.attempt, Stream: stream, Text: text})
	if !o.looping && !o.closed {
		o.looping = true
		go o.flushLoop()
	}
	if o.file == nil && o.dir != "" {
		// The local file keeps everything; Redis keeps the last lines.
		if err := os.MkdirAll(o.dir, 0o700); err == nil {
			o.file, _ = os.OpenFile(filepath.Join(o.dir, o.jobID+"."+strconv.Itoa(o.attempt)+".log"),
				os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		}
		o.dir = "" // one try: a full disk must not cost a syscall per line
	}
	if o.file != nil {
		o.file.WriteString(text + "\n")
	}
	o.mu.Unlock()
	if stream == "stdout" && o.onCheckpoint != nil {
		if c, ok := parseCheckpoint(text); ok {
			o.onCheckpoint(c)
		}
	}
	// One line may carry both a checkpoint and a metric ({"checkpoint":
	// "e3", "loss": 0.2}): each is recognised on its own.
	if stream == "stdout" && o.metric != "" && o.onMetric != nil {
		if v, ok := sweep.ParseMetric(text, o.metric); ok {
			o.onMetric(v)
		}
	}
}

func (o *output) flushLoop() {
	defer close(o.flushed)
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			o.flush()
		case <-o.done:
			o.flush()
			return
		}
	}
}

func (o *output) flush() {
	o.mu.Lock()
	batch := o.pending
	o.pending = nil
	o.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Lost log lines are not lost work: the local file has them all.
	_ = o.store.AppendLogs(ctx, o.jobID, batch, o.keep)
}

// close flushes what is left and closes the file.
func (o *output) close() {
	o.mu.Lock()
	o.closed = true
	looping := o.looping
	o.mu.Unlock()
	if looping {
		close(o.done)
		<-o.flushed
	}
	if o.file != nil {
		o.file.Close()
	}
}

// parseCheckpoint recognises {"checkpoint": ...} lines. A string value is the
// checkpoint itself; any other value is kept as its JSON text.
func parseCheckpoint(line string) (string, bool) {
	b := bytes.TrimSpace([]byte(line))
	if len(b) < 2 || b[0] != '{' || !bytes.Contains(b, []byte(`"checkpoint"`)) {
		return "", false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return "", false
	}
	raw, ok := m["checkpoint"]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, s != ""
	}
	return string(raw), true
}

// lineWriter splits a byte stream into lines.
type lineWriter struct {
	emit func(string)
	buf  []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.buf = append(w.buf, p...)
			for len(w.buf) >= maxLineBytes {
				w.emit(string(w.buf[:maxLineBytes]))
				w.buf = append(w.buf[:0], w.buf[maxLineBytes:]...)
			}
			break
		}
		w.buf = append(w.buf, p[:i]...)
		w.emit(string(bytes.TrimSuffix(w.buf, []byte("\r"))))
		w.buf = w.buf[:0]
		p = p[i+1:]
	}
	return n, nil
}

// Flush emits a last line without a newline.
func (w *lineWriter) Flush() {
	if len(w.buf) > 0 {
		w.emit(string(w.buf))
		w.buf = w.buf[:0]
	}
}
