package bench

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// meter is a go-redis hook that counts round trips by what they do, so a run
// can say where its Redis traffic per job goes and not only how fast it was.
// A pipeline counts as one round trip.
type meter struct {
	ns     string // replaced by "NS" in labels
	worker string // the Ballast worker's ID, replaced by "W"

	mu    sync.Mutex
	calls map[string]int
	// scripts caches each script's label by its SHA: a script's keys
	// always have the same shape, and shaping them for every call would
	// make the meter a visible share of the CPU it measures.
	scripts map[string]string
}

func newMeter(ns string) *meter {
	return &meter{ns: ns, calls: map[string]int{}, scripts: map[string]string{}}
}

func (m *meter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (m *meter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		m.add(m.label(cmd))
		return next(ctx, cmd)
	}
}

func (m *meter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		// A pipeline is one round trip whatever it holds; the label names
		// the kinds of command in it, such as a worker's coalesced claims
		// and finishes.
		var kinds []string
		for _, c := range cmds {
			if l := m.label(c); !slices.Contains(kinds, l) {
				kinds = append(kinds, l)
			}
		}
		slices.Sort(kinds)
		m.add("pipeline of " + strings.Join(kinds, " + "))
		return next(ctx, cmds)
	}
}

func (m *meter) add(label string) {
	m.mu.Lock()
	m.calls[label]++
	m.mu.Unlock()
}

func (m *meter) setWorker(id string) {
	m.mu.Lock()
	m.worker = id
	m.mu.Unlock()
}

// snapshot returns the counts so far; a phase's traffic is the difference of
// two snapshots.
func (m *meter) snapshot() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.calls)
}

func since(before, after map[string]int) map[string]int {
	d := make(map[string]int, len(after))
	for k, v := range after {
		if n := v - before[k]; n > 0 {
			d[k] = n
		}
	}
	return d
}

// scriptNames names the scripts this bench drives, recognised by the shape
// of their first two keys. A shape not listed here (a script changed its
// keys) is shown as the shape itself, which is still comparable across runs.
var scriptNames = map[string]string{
	"asynq:{Q}:pending asynq:{Q}:paused":    "asynq dequeue",
	"asynq:{Q}:t:* asynq:{Q}:pending":       "asynq enqueue",
	"asynq:{Q}:active asynq:{Q}:lease":      "asynq done",
	"asynq:{Q}:scheduled asynq:{Q}:pending": "asynq forward scheduled",
	"asynq:{Q}:retry asynq:{Q}:pending":     "asynq forward retry",
	"asynq:servers:{*} asynq:workers:{*}":   "asynq server state",
	"NS:job:* NS:idem:":                     "ballast submit",
	"NS:job:* NS:outbox":                    "ballast claim",
	"NS:job:* NS:worker:W:jobs":             "ballast finish",
	"NS:workers NS:worker:W":                "ballast heartbeat",
}

// label describes a command without its IDs: "hset NS:job:*", or for a
// script its name (or key shape).
func (m *meter) label(cmd redis.Cmder) string {
	args := cmd.Args()
	name := strings.ToLower(cmd.Name())
	switch name {
	case "evalsha", "eval", "evalsha_ro", "eval_ro":
		if len(args) < 3 {
			return name
		}
		sha, _ := args[1].(string)
		if name == "evalsha" {
			m.mu.Lock()
			l, ok := m.scripts[sha]
			m.mu.Unlock()
			if ok {
				return l
			}
		}
		n, _ := args[2].(int)
		var keys []string
		for i := 3; i < 3+n && i < len(args) && len(keys) < 2; i++ {
			k, _ := args[i].(string)
			keys = append(keys, m.shape(k))
		}
		shape := strings.Join(keys, " ")
		l := "script: " + shape
		if s, ok := scriptNames[shape]; ok {
			l = "script: " + s
		}
		if name == "evalsha" {
			m.mu.Lock()
			m.scripts[sha] = l
			m.mu.Unlock()
		}
		return l
	}
	if len(args) > 1 {
		if k, ok := args[1].(string); ok {
			return name + " " + m.shape(k)
		}
	}
	return name
}

// shape hides what varies between calls of the same kind: the namespace,
// the queue, the worker and every ID.
func (m *meter) shape(key string) string {
	m.mu.Lock()
	worker := m.worker
	m.mu.Unlock()
	if m.ns != "" {
		// Ballast's keys carry the namespace as their hash tag, "{ns}:...".
		key = strings.ReplaceAll(key, "{"+m.ns+"}:", m.ns+":")
		key = strings.ReplaceAll(key, m.ns, "NS")
	}
	if worker != "" {
		key = strings.ReplaceAll(key, worker, "W")
	}
	if i := strings.Index(key, "{"); i >= 0 {
		if j := strings.Index(key[i:], "}"); j > 0 {
			inner := key[i+1 : i+j]
			if strings.HasPrefix(inner, "NS.") {
				key = key[:i] + "{Q}" + key[i+j+1:]
			} else {
				key = key[:i] + "{*}" + key[i+j+1:]
			}
		}
	}
	parts := strings.Split(key, ":")
	out := parts[:0]
	for _, p := range parts {
		switch {
		case looksLikeID(p):
			p = "*"
		case isDigits(p) && len(out) > 0 && out[len(out)-1] == "*":
			continue // the attempt of a Ballast task ID ("jobID:attempt")
		}
		out = append(out, p)
	}
	return strings.Join(out, ":")
}

// looksLikeID matches job IDs (28 hex digits), asynq task IDs (UUIDs) and
// dates in per-day stats keys.
func looksLikeID(s string) bool {
	if len(s) < 8 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c == '-') {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

var _ redis.Hook = (*meter)(nil)
