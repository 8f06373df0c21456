package chaos

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// effect is one side-effect line: a job's attempt completed its work. seen
// is when the run first read the line, within a poll interval of its write.
type effect struct {
	job     string
	attempt int
	seen    time.Time
	// index is the line's place in the file: O_APPEND writes land in the
	// order they were made.
	index int
}

// effectLog follows the shared side-effect file. Reading it as it grows
// gives each line a time, which says whether an attempt's side effect came
// before a kill or during a pause.
type effectLog struct {
	path string

	mu      sync.Mutex
	off     int64
	partial []byte
	lines   []effect
	bad     []string
}

// follow polls the file every interval until ctx ends.
func (l *effectLog) follow(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.poll()
		}
	}
}

// poll reads what was appended since the last poll.
func (l *effectLog) poll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := os.Open(l.path)
	if err != nil {
		return // no job has finished yet
	}
	defer f.Close()
	if _, err := f.Seek(l.off, io.SeekStart); err != nil {
		return
	}
	b, err := io.ReadAll(f)
	if err != nil || len(b) == 0 {
		return
	}
	l.off += int64(len(b))
	now := time.Now()
	b = append(l.partial, b...)
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		l.parse(string(b[:i]), now)
		b = b[i+1:]
	}
	l.partial = append([]byte(nil), b...)
}

func (l *effectLog) parse(line string, now time.Time) {
	f := strings.Fields(line)
	if len(f) != 2 {
		l.bad = append(l.bad, line)
		return
	}
	a, err := strconv.Atoi(f[1])
	if err != nil {
		l.bad = append(l.bad, line)
		return
	}
	l.lines = append(l.lines, effect{job: f[0], attempt: a, seen: now, index: len(l.lines)})
}

// snapshot returns every line read so far, and the malformed ones (a torn
// write would show here).
func (l *effectLog) snapshot() ([]effect, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	bad := append([]string(nil), l.bad...)
	if len(l.partial) > 0 {
		bad = append(bad, fmt.Sprintf("%s (no newline)", l.partial))
	}
	return append([]effect(nil), l.lines...), bad
}

// count returns how many lines were read so far.
func (l *effectLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}
