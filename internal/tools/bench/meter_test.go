package bench

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestMeterLabels(t *testing.T) {
	m := newMeter("benchab12")
	m.setWorker("bench-0a1b2c")
	ctx := context.Background()
	job := "018f2c3d4e5f0123456789abcdef"
	for _, c := range []struct {
		args []any
		want string
	}{
		{[]any{"evalsha", "sha1", 4, "{benchab12}:job:" + job, "{benchab12}:idem:", "{benchab12}:jobs", "{benchab12}:outbox", "id"}, "script: ballast submit"},
		{[]any{"evalsha", "sha2", 3, "{benchab12}:job:" + job, "{benchab12}:worker:bench-0a1b2c:jobs", "{benchab12}:job:" + job + ":log"}, "script: ballast finish"},
		{[]any{"evalsha", "sha3", 2, "asynq:{benchab12.core}:t:" + job + ":1", "asynq:{benchab12.core}:pending"}, "script: asynq enqueue"},
		{[]any{"evalsha", "sha4", 2, "asynq:{benchab12.raw}:t:6f1c2b7e-95a4-4d27-9a55-0c4f1e2d3b4a", "asynq:{benchab12.raw}:pending"}, "script: asynq enqueue"},
		{[]any{"evalsha", "sha5", 2, "asynq:{benchab12.raw}:x", "other"}, "script: asynq:{Q}:x other"},
		{[]any{"hgetall", "{benchab12}:job:" + job}, "hgetall NS:job:*"},
		{[]any{"ping"}, "ping"},
	} {
		// Twice: the second answer comes from the cache by SHA.
		for range 2 {
			if got := m.label(redis.NewCmd(ctx, c.args...)); got != c.want {
				t.Errorf("label(%v) = %q, want %q", c.args, got, c.want)
			}
		}
	}
}

func TestSummarize(t *testing.T) {
	var s []time.Duration
	for i := 100; i >= 1; i-- {
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	l := summarize(s)
	if l.Samples != 100 || l.P50 != 50*time.Millisecond || l.P90 != 90*time.Millisecond || l.P99 != 99*time.Millisecond || l.Max != 100*time.Millisecond {
		t.Fatalf("summarize: %+v", l)
	}
	if summarize(nil) != (Latency{}) {
		t.Fatal("summarize of nothing is not zero")
	}
}
