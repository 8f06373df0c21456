package provider

import (
	"strings"
	"sync"
)

// tail is an io.Writer that keeps only the end of what is written to it,
// so a chatty child's stderr can be kept for error messages without growing
// without bound.
type tail struct {
	mu    sync.Mutex
	buf   []byte
	max   int // bytes kept
	lines int // lines shown by String
}

// newTail keeps the last maxBytes bytes and shows the last lines lines.
func newTail(maxBytes, lines int) *tail { return &tail{max: maxBytes, lines: lines} }

// Write never fails, so a child is never blocked or broken by its pipe.
func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		// Copy down rather than reslice, so the backing array stays bounded.
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String returns the last lines, joined with " | " so they fit one log line.
func (t *tail) String() string {
	t.mu.Lock()
	s := strings.TrimSpace(string(t.buf))
	t.mu.Unlock()
	if s == "" {
		return ""
	}
	ls := strings.Split(s, "\n")
	if len(ls) > t.lines {
		ls = ls[len(ls)-t.lines:]
	}
	for i := range ls {
		ls[i] = strings.TrimSpace(ls[i])
	}
	return strings.Join(ls, " | ")
}
