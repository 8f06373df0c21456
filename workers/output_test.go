package workers

import (
	"context"
	"testing"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/logs"
)

// TestOutputStartsItsLoopAtTheFirstLine: output that gets no line starts
// no loop and closes at once, and a line after its close starts none (it
// would never end); lines that come before close reach the job's log in
// Redis by then.
func TestOutputStartsItsLoopAtTheFirstLine(t *testing.T) {
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	ctx := context.Background()

	quiet := newOutput(logs.New(store), "", "quiet", 1, 100, nil, "", nil) // no local file: the late line would open one
	quiet.close()
	quiet.line("stdout", "late")
	quiet.mu.Lock()
	started := quiet.looping
	quiet.mu.Unlock()
	if started {
		t.Fatal("a line after close started a loop")
	}

	o := newOutput(logs.New(store), t.TempDir(), "chatty", 1, 100, nil, "", nil)
	w := o.writer("stdout")
	if _, err := w.Write([]byte("one\ntwo\n")); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	o.close()
	lines, err := logs.New(store).Logs(ctx, "chatty", "", 10)
	if err != nil || len(lines) != 2 || lines[0].Text != "one" || lines[1].Text != "two" {
		t.Fatalf("log after close: %+v %v", lines, err)
	}
}
