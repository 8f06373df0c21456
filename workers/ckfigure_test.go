package workers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/workers/checkpoint"
)

// TestCheckpointTravelFigure measures a 1 GiB checkpoint directory (eight
// 128 MiB files and 100 small ones) travelling from worker A to worker B
// through an S3 server on loopback: the upload (report to commit) and the
// restore before attempt 2 starts, which must find every file identical.
// It runs only with BALLAST_CKPT_FIGURE set (it writes and hashes 1 GiB
// several times); run it without -race for figures:
//
//	BALLAST_CKPT_FIGURE=1 go test -count=1 -run TestCheckpointTravelFigure -v ./workers/
func TestCheckpointTravelFigure(t *testing.T) {
	if os.Getenv("BALLAST_CKPT_FIGURE") == "" {
		t.Skip("set BALLAST_CKPT_FIGURE=1 to measure a 1 GiB checkpoint travelling")
	}
	e := newEnv(t)
	st := openStore(t, testenv.S3(t, nil))
	rec := &recorder{}
	oa := e.withStore(st, rec)
	oa.CheckpointOptions = checkpoint.Options{} // the defaults: 8 MiB chunks
	a := e.start(oa)
	spec := e.shell(`cd "$BALLAST_CHECKPOINT_DIR" || exit 3
if [ -n "$BALLAST_RESUME_FROM" ]; then
  find . -type f | sort | while read -r f; do printf '%s %s\n' "$f" "$(sha256sum "$f" | cut -d' ' -f1)"; done > "$BALLAST_PARAM_DIR/seen"
  exit 0
fi
for i in 1 2 3 4 5 6 7 8; do head -c 134217728 /dev/urandom > "big$i.bin"; done
mkdir -p small && i=0 && while [ $i -lt 100 ]; do head -c 4096 /dev/urandom > "small/$i"; i=$((i+1)); done
echo '{"checkpoint":"full"}'
trap 'exit 0' TERM
while :; do sleep 0.05; done`)
	spec.Checkpointable, spec.Retryable = true, true
	spec.Timeout, spec.Grace = jobs.Duration(10*time.Minute), jobs.Duration(2*time.Minute)
	j := e.submit(spec, queues.QueueCore)
	e.waitFor(j.ID, 5*time.Minute, "the 1 GiB checkpoint committed", func(j jobs.Job) bool { return j.Checkpoint == "full" })
	a.Stop()
	want := digest(t, filepath.Join(oa.CheckpointDir, j.ID))
	ob := e.withStore(st, rec)
	ob.CheckpointOptions = checkpoint.Options{}
	e.start(ob)
	done := e.waitTerminal(j.ID, 5*time.Minute)
	if done.State != jobs.StateSucceeded {
		t.Fatalf("ended %s: %s", done.State, done.LastError)
	}
	if seen := e.read("seen"); seen != want {
		t.Fatalf("worker B's files differ from worker A's (%d and %d lines)", strings.Count(seen, "\n"), strings.Count(want, "\n"))
	}
	up, _ := events.ParseCheckpointTransfer(rec.find(j.ID, events.TypeJobCheckpoint)[0])
	back, _ := events.ParseCheckpointTransfer(rec.find(j.ID, events.TypeJobCheckpointRestored)[0])
	t.Logf("1 GiB checkpoint (%d files, %d bytes): upload %s (%d bytes written), restore %s (%d bytes read); sha256 of every file identical on worker B",
		up.Files, up.Size, up.Duration.Round(time.Millisecond), up.Bytes, back.Duration.Round(time.Millisecond), back.Bytes)
	if up.Duration > 30*time.Second || back.Duration > 30*time.Second {
		t.Errorf("upload %s or restore %s over 30 s", up.Duration, back.Duration)
	}
}
