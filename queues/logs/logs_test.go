package logs_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/logs"
)

func newStore(t *testing.T) (*logs.Store, *queues.Store) {
	t.Helper()
	rdb, ns := testenv.Redis(t)
	k := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	return logs.New(k), k
}

func TestLogs(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	var lines []logs.Line
	for i := 0; i < 5; i++ {
		lines = append(lines, logs.Line{Attempt: 1, Stream: "stdout", Text: string(rune('a' + i))})
	}
	if err := s.AppendLogs(ctx, "j", lines, 100); err != nil {
		t.Fatal(err)
	}
	first, _ := s.Logs(ctx, "j", "", 2)
	if len(first) != 2 || first[0].Text != "a" || first[1].Text != "b" {
		t.Fatalf("first page %+v", first)
	}
	rest, _ := s.Logs(ctx, "j", first[1].ID, 100)
	if len(rest) != 3 || rest[2].Text != "e" || rest[0].Stream != "stdout" {
		t.Fatalf("rest %+v", rest)
	}
}

// TestLogsKeepAboutMax: the stream is trimmed as lines come in, so a
// chatty job cannot fill Redis; the newest lines are the ones kept.
func TestLogsKeepAboutMax(t *testing.T) {
	t.Parallel()
	s, k := newStore(t)
	ctx := context.Background()
	const max = 100
	for i := 0; i < 10; i++ {
		var batch []logs.Line
		for j := 0; j < 100; j++ {
			batch = append(batch, logs.Line{Attempt: 1, Stream: "stderr", Text: strconv.Itoa(i*100 + j)})
		}
		if err := s.AppendLogs(ctx, "chatty", batch, max); err != nil {
			t.Fatal(err)
		}
	}
	// Approximate trimming keeps at least max and frees whole stream
	// nodes, so it keeps far fewer than the 1,000 lines written.
	n := k.Redis().XLen(ctx, k.Namespace().JobLog("chatty")).Val()
	if n < max || n >= 1000 {
		t.Fatalf("the log holds %d lines after 1,000 appended with max %d", n, max)
	}
	got, err := s.Logs(ctx, "chatty", "", 10000)
	if err != nil || int64(len(got)) != n {
		t.Fatalf("Logs read %d lines (%v), the stream holds %d", len(got), err, n)
	}
	if last := got[len(got)-1]; last.Text != "999" || last.Stream != "stderr" {
		t.Fatalf("last line kept %+v, want the last written", last)
	}
}

// TestLogsOfAJobWithNone: a job that wrote nothing has an empty log, not
// an error, so a follower just waits.
func TestLogsOfAJobWithNone(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	got, err := s.Logs(context.Background(), "quiet", "", 10)
	if err != nil || len(got) != 0 {
		t.Fatalf("Logs of a silent job = %+v, %v", got, err)
	}
	if err := s.AppendLogs(context.Background(), "quiet", nil, 10); err != nil {
		t.Fatalf("appending nothing: %v", err)
	}
}
