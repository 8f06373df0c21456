package workers_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/checkpoints"
	"github.com/ballastdev/ballast/workers"
	"github.com/ballastdev/ballast/workers/checkpoint"
)

// withStore returns worker options that checkpoint to st from a checkpoint
// directory of their own, and publish to rec.
func (e *env) withStore(st *checkpoint.Store, rec *recorder) workers.Options {
	o := e.options()
	o.CheckpointStore = st
	// Small chunks: the test's files span several.
	o.CheckpointOptions = checkpoint.Options{ChunkSize: 256 << 10, Keep: 3}
	o.Events = rec
	return o
}

func openStore(t *testing.T, rawURL string) *checkpoint.Store {
	t.Helper()
	st, err := checkpoint.Open(context.Background(), rawURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// travelling is a job whose first attempt fills its checkpoint directory
// (a 1.5 MB random file, a nested file, an empty one), reports checkpoint
// "step-1", and on SIGTERM changes a file and reports "step-2" before it
// exits, as a job stopped mid-work does. A resumed attempt writes, into
// the scratch directory, what it resumes from and the sha256 of every file
// it finds in its checkpoint directory, then succeeds.
func (e *env) travelling() jobs.Spec {
	spec := e.shell(`
cd "$BALLAST_CHECKPOINT_DIR" || exit 3
if [ -n "$BALLAST_RESUME_FROM" ]; then
  echo "$BALLAST_RESUME_FROM" > "$BALLAST_PARAM_DIR/resumed$BALLAST_ATTEMPT"
  find . -type f | sort | while read -r f; do printf '%s %s\n' "$f" "$(sha256sum "$f" | cut -d' ' -f1)"; done > "$BALLAST_PARAM_DIR/seen$BALLAST_ATTEMPT"
  exit 0
fi
head -c 1500000 /dev/urandom > model.bin
mkdir -p opt/state && echo "lr=0.1" > opt/state/params && : > empty
echo '{"checkpoint":"step-1"}'
trap 'echo "epoch 2" >> opt/state/params; echo "{\"checkpoint\":\"step-2\"}"; exit 0' TERM
echo started > "$BALLAST_PARAM_DIR/started$BALLAST_ATTEMPT"
while :; do sleep 0.05; done`)
	spec.Checkpointable = true
	spec.Retryable = true
	spec.Grace = jobs.Duration(10 * time.Second)
	return spec
}

// digest lists "./path sha256" for every file under dir, as the job does.
func digest(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		sum := sha256.Sum256(b)
		lines = append(lines, "./"+filepath.ToSlash(rel)+" "+hex.EncodeToString(sum[:]))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// objects counts the store's objects under prefix.
func objects(t *testing.T, st *checkpoint.Store, prefix string) int {
	t.Helper()
	n := 0
	it := st.Bucket().List(&blob.ListOptions{Prefix: prefix})
	for {
		_, err := it.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
}

// TestCheckpointTravelsBetweenWorkers: attempt 1 on worker A writes files
// and reports a checkpoint, then is stopped (a drain) and reports its last
// one in its grace; attempt 2 runs on worker B, whose checkpoint directory
// started empty, and finds every file byte-identical, with
// BALLAST_RESUME_FROM naming the last checkpoint. The job's objects leave
// the store once it has ended.
func TestCheckpointTravelsBetweenWorkers(t *testing.T) {
	e := newEnv(t)
	st := openStore(t, testenv.S3(t, nil))
	rec := &recorder{}
	oa := e.withStore(st, rec)
	a := e.start(oa)
	j := e.submit(e.travelling(), queues.QueueCore)
	e.waitFile("started1", wait)
	e.waitFor(j.ID, wait, "the first checkpoint to commit", func(j jobs.Job) bool { return j.Checkpoint == "step-1" })
	a.Stop() // drain: SIGTERM, the job reports step-2, the upload commits, the job is requeued
	got := e.get(j.ID)
	if got.State != jobs.StateQueued || got.Checkpoint != "step-2" {
		t.Fatalf("after the drain: state %s, checkpoint %q; want queued from step-2", got.State, got.Checkpoint)
	}
	want := digest(t, filepath.Join(oa.CheckpointDir, j.ID))
	if !strings.Contains(want, "./model.bin ") || !strings.Contains(want, "./opt/state/params ") || !strings.Contains(want, "./empty ") {
		t.Fatalf("worker A's directory lacks the job's files:\n%s", want)
	}

	ob := e.withStore(st, rec)
	if entries, _ := os.ReadDir(ob.CheckpointDir); len(entries) != 0 {
		t.Fatalf("worker B's checkpoint directory is not empty: %v", entries)
	}
	e.start(ob)
	done := e.waitTerminal(j.ID, wait)
	if done.State != jobs.StateSucceeded {
		t.Fatalf("attempt %d ended %s (%s), want succeeded", done.Attempt, done.State, done.LastError)
	}
	seen := e.read("seen" + itoa(done.Attempt))
	if seen != want {
		t.Errorf("attempt %d on worker B found:\n%s\nwant (worker A's files):\n%s", done.Attempt, seen, want)
	}
	if r := strings.TrimSpace(e.read("resumed" + itoa(done.Attempt))); r != "step-2" {
		t.Errorf("BALLAST_RESUME_FROM = %q, want step-2", r)
	}

	commits := rec.find(j.ID, events.TypeJobCheckpoint)
	var tokens []string
	for _, ev := range commits {
		c, ok := events.ParseCheckpointTransfer(ev)
		if !ok {
			t.Fatalf("a commit event without its figures: %+v", ev)
		}
		tokens = append(tokens, c.Token)
	}
	if strings.Join(tokens, ",") != "step-1,step-2" {
		t.Errorf("commits %v, want step-1 then step-2", tokens)
	}
	if len(commits) == 2 {
		first, _ := events.ParseCheckpointTransfer(commits[0])
		second, _ := events.ParseCheckpointTransfer(commits[1])
		// The second upload writes only the changed file's chunk.
		if first.Bytes < 1500000 || second.Bytes <= 0 || second.Bytes >= 256<<10 {
			t.Errorf("uploaded %d then %d bytes; want the whole directory, then one small chunk", first.Bytes, second.Bytes)
		}
		t.Logf("upload 1: %d bytes in %s; upload 2: %d bytes in %s", first.Bytes, first.Duration, second.Bytes, second.Duration)
		// Each commit's upload time is kept in Redis too, newest first,
		// for the simulator's measured checkpoint overhead.
		took, err := checkpoints.New(e.store).Uploads(context.Background())
		if err != nil || len(took) != 2 || took[0] != second.Duration.Truncate(time.Millisecond) ||
			took[1] != first.Duration.Truncate(time.Millisecond) {
			t.Errorf("recorded upload times %v (%v), want %v then %v", took, err, second.Duration, first.Duration)
		}
	}
	restores := rec.find(j.ID, events.TypeJobCheckpointRestored)
	if len(restores) != 1 {
		t.Fatalf("%d restore events, want 1", len(restores))
	}
	r, _ := events.ParseCheckpointTransfer(restores[0])
	if r.Token != "step-2" || r.Bytes < 1500000 || r.Reused != 0 {
		t.Errorf("restore %+v; want step-2, the whole directory downloaded", r)
	}
	t.Logf("restore: %d bytes in %s", r.Bytes, r.Duration)
	testenv.Eventually(t, wait, "the ended job's objects and ledger to go", func() bool {
		// An empty list is no key at all in Redis: the ledger is gone.
		keys, err := checkpoints.New(e.store).Committed(context.Background(), j.ID)
		return objects(t, st, "jobs/"+j.ID+"/") == 0 && err == nil && len(keys) == 0
	})
}

// TestCheckpointRestoreReusesFilesInPlace: an attempt resumed on the
// worker that holds the checkpoint's files downloads nothing.
func TestCheckpointRestoreReusesFilesInPlace(t *testing.T) {
	e := newEnv(t)
	st := openStore(t, testenv.S3(t, nil))
	rec := &recorder{}
	o := e.withStore(st, rec)
	a := e.start(o)
	j := e.submit(e.travelling(), queues.QueueCore)
	e.waitFile("started1", wait)
	a.Stop()
	if got := e.get(j.ID); got.Checkpoint != "step-2" {
		t.Fatalf("checkpoint %q after the drain, want step-2", got.Checkpoint)
	}
	want := digest(t, filepath.Join(o.CheckpointDir, j.ID))
	e.start(o) // the same machine: the same checkpoint directory
	done := e.waitTerminal(j.ID, wait)
	if seen := e.read("seen" + itoa(done.Attempt)); seen != want {
		t.Errorf("found:\n%s\nwant:\n%s", seen, want)
	}
	restores := rec.find(j.ID, events.TypeJobCheckpointRestored)
	if len(restores) != 1 {
		t.Fatalf("%d restore events, want 1", len(restores))
	}
	if r, _ := events.ParseCheckpointTransfer(restores[0]); r.Bytes != 0 || r.Reused != r.Files || r.Files != 3 {
		t.Errorf("restore %+v; want nothing downloaded, 3 files reused", r)
	}
}

// TestCheckpointUnfinishedUploadFallsBack: a last upload that cannot
// finish within the job's grace commits nothing; the next attempt resumes
// from the checkpoint before it, and an event says so.
func TestCheckpointUnfinishedUploadFallsBack(t *testing.T) {
	e := newEnv(t)
	var stall atomic.Bool
	release := make(chan struct{})
	st := openStore(t, testenv.S3(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if stall.Load() && r.Method == http.MethodPut {
				select { // a store too slow for the grace
				case <-release:
				case <-r.Context().Done():
					return
				}
			}
			h.ServeHTTP(w, r)
		})
	}))
	// Registered after the server's: cleanups run last in first out, and
	// the server waits for its stalled requests when it closes.
	t.Cleanup(func() { close(release) })
	rec := &recorder{}
	oa := e.withStore(st, rec)
	a := e.start(oa)
	spec := e.travelling()
	spec.Grace = jobs.Duration(time.Second)
	j := e.submit(spec, queues.QueueCore)
	e.waitFor(j.ID, wait, "the first checkpoint to commit", func(j jobs.Job) bool { return j.Checkpoint == "step-1" })
	want := digest(t, filepath.Join(oa.CheckpointDir, j.ID)) // before the change on SIGTERM
	stall.Store(true)
	a.Stop()
	if got := e.get(j.ID); got.State != jobs.StateQueued || got.Checkpoint != "step-1" {
		t.Fatalf("after the drain: %s from %q; want queued from step-1", got.State, got.Checkpoint)
	}
	fb := rec.find(j.ID, events.TypeJobCheckpointFallback)
	if len(fb) != 1 {
		t.Fatalf("%d fallback events, want 1", len(fb))
	}
	if s, _ := events.ParseCheckpointSetback(fb[0]); s.Cause != events.FallbackUnfinished || s.Token != "step-2" || s.ResumeFrom != "step-1" {
		t.Errorf("fallback %+v; want step-2 unfinished, resuming from step-1", s)
	}
	stall.Store(false)
	e.start(e.withStore(st, rec))
	done := e.waitTerminal(j.ID, wait)
	if r := strings.TrimSpace(e.read("resumed" + itoa(done.Attempt))); r != "step-1" {
		t.Errorf("resumed from %q, want step-1", r)
	}
	if seen := e.read("seen" + itoa(done.Attempt)); seen != want {
		t.Errorf("found:\n%s\nwant step-1's files:\n%s", seen, want)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestCheckpointGangRestoresMemberZeros: a gang's checkpoint is member
// 0's. Member 0 writes files and reports a checkpoint; the attempt fails
// and is placed again with the members swapped between the workers; both
// members of the new attempt start with member 0's files and its token,
// the one on the worker that held them downloading nothing.
func TestCheckpointGangRestoresMemberZeros(t *testing.T) {
	e := newEnv(t)
	st := openStore(t, testenv.S3(t, nil))
	rec := &recorder{}
	dirs := map[string]string{}
	for _, id := range []string{"g0", "g1"} {
		o := e.withStore(st, rec)
		o.ID = id
		dirs[id] = o.CheckpointDir
		e.start(o)
	}
	sp := e.shell(`cd "$BALLAST_CHECKPOINT_DIR" || exit 4
if [ "$BALLAST_ATTEMPT" = 2 ]; then
  if [ "$BALLAST_REPLICA" = 0 ]; then
    head -c 600000 /dev/urandom > model.bin && mkdir -p opt && echo "member 0" > opt/state
    echo '{"checkpoint":"gang-1"}'
  fi
  while [ ! -e "$BALLAST_PARAM_DIR/go" ]; do sleep 0.05; done
  exit 3
fi
find . -type f | sort | while read -r f; do printf '%s %s\n' "$f" "$(sha256sum "$f" | cut -d' ' -f1)"; done > "$BALLAST_PARAM_DIR/seen$BALLAST_REPLICA"
echo "$BALLAST_RESUME_FROM" > "$BALLAST_PARAM_DIR/resumed$BALLAST_REPLICA"`)
	sp.Size = jobs.Size{Replicas: 2}
	sp.Retryable, sp.MaxRetries, sp.Checkpointable = true, 2, true
	sp.Grace = jobs.Duration(5 * time.Second)
	j := e.submit(sp, queues.QueueCore)
	ctx := context.Background()
	if a, err := e.store.Place(ctx, j.ID, 1, []string{"g0", "g1"}); a != 2 || err != nil {
		t.Fatalf("Place = %d, %v", a, err)
	}
	e.waitFor(j.ID, wait, "member 0's checkpoint committed", func(j jobs.Job) bool { return j.Checkpoint == "gang-1" })
	var want, holder string
	for id, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, j.ID, "model.bin")); err == nil {
			want, holder = digest(t, filepath.Join(d, j.ID)), id
		}
	}
	if holder == "" {
		t.Fatal("no worker holds member 0's files")
	}
	e.touch("go")
	e.waitFor(j.ID, wait, "the gang requeued after the failure", func(j jobs.Job) bool {
		return j.Attempt == 3 && j.State == jobs.StateQueued
	})
	other := map[string]string{"g0": "g1", "g1": "g0"}[holder]
	if a, err := e.store.Place(ctx, j.ID, 3, []string{other, holder}); a != 4 || err != nil {
		t.Fatalf("second Place = %d, %v", a, err)
	}
	done := e.waitTerminal(j.ID, retryWait)
	if done.State != jobs.StateSucceeded {
		t.Fatalf("the gang ended %s (%s), want succeeded", done.State, done.LastError)
	}
	for _, m := range []string{"0", "1"} {
		if seen := e.read("seen" + m); seen != want {
			t.Errorf("member %s found:\n%s\nwant member 0's files:\n%s", m, seen, want)
		}
		if r := strings.TrimSpace(e.read("resumed" + m)); r != "gang-1" {
			t.Errorf("member %s resumed from %q, want gang-1", m, r)
		}
	}
	var fetched, reused int
	for _, ev := range rec.find(j.ID, events.TypeJobCheckpointRestored) {
		r, _ := events.ParseCheckpointTransfer(ev)
		if r.Attempt != 4 {
			continue
		}
		switch {
		case r.Worker == other && r.Bytes >= 600000:
			fetched++
		case r.Worker == holder && r.Bytes == 0 && r.Reused == 2:
			reused++
		default:
			t.Errorf("restore %+v", r)
		}
	}
	if fetched != 1 || reused != 1 {
		t.Errorf("%d restores downloading and %d reusing, want one each", fetched, reused)
	}
}

// TestCheckpointLateCommitRefused: an upload still in flight when the
// attempt is moved on (its worker declared dead, as a cut-off worker is)
// is refused at commit, with an event; the job keeps its previous
// checkpoint, and the next attempt restores that one, not the late files.
func TestCheckpointLateCommitRefused(t *testing.T) {
	e := newEnv(t)
	var stall atomic.Bool
	var stalled atomic.Int32
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	st := openStore(t, testenv.S3(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if stall.Load() && r.Method == http.MethodPut {
				stalled.Add(1)
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
			}
			h.ServeHTTP(w, r)
		})
	}))
	t.Cleanup(open) // before the server's close, which waits for stalled requests
	rec := &recorder{}
	oa := e.withStore(st, rec)
	oa.ID = "cut-off"
	// Slow beats: the worker learns it was declared dead only after the
	// late commit was tried.
	oa.Heartbeat, oa.WorkerTTL = 3*time.Second, 30*time.Second
	e.start(oa)
	spec := e.shell(`cd "$BALLAST_CHECKPOINT_DIR" || exit 3
if [ -n "$BALLAST_RESUME_FROM" ]; then
  ls > "$BALLAST_PARAM_DIR/seen"; echo "$BALLAST_RESUME_FROM" > "$BALLAST_PARAM_DIR/resumed"; exit 0
fi
echo one > one && echo '{"checkpoint":"r-1"}'
while [ ! -e "$BALLAST_PARAM_DIR/more" ]; do sleep 0.05; done
echo two > two && echo '{"checkpoint":"r-2"}'
trap 'exit 0' TERM
while :; do sleep 0.05; done`)
	spec.Checkpointable, spec.Retryable = true, true
	j := e.submit(spec, queues.QueueCore)
	e.waitFor(j.ID, wait, "r-1 committed", func(j jobs.Job) bool { return j.Checkpoint == "r-1" })
	stall.Store(true)
	e.touch("more")
	testenv.Eventually(t, wait, "r-2's upload to stall", func() bool { return stalled.Load() > 0 })
	if _, err := e.store.RecoverWorker(context.Background(), "cut-off"); err != nil {
		t.Fatal(err)
	}
	stall.Store(false)
	open()
	testenv.Eventually(t, wait, "the late commit refused", func() bool {
		return len(rec.find(j.ID, events.TypeJobCheckpointRefused)) > 0
	})
	s, _ := events.ParseCheckpointSetback(rec.find(j.ID, events.TypeJobCheckpointRefused)[0])
	if s.Token != "r-2" {
		t.Errorf("refused %+v, want r-2", s)
	}
	if got := e.get(j.ID); got.Checkpoint != "r-1" {
		t.Fatalf("the job's checkpoint is %q after the refusal, want r-1", got.Checkpoint)
	}
	e.start(e.withStore(st, rec))
	done := e.waitTerminal(j.ID, retryWait)
	if done.State != jobs.StateSucceeded {
		t.Fatalf("ended %s (%s)", done.State, done.LastError)
	}
	if r, seen := strings.TrimSpace(e.read("resumed")), strings.Fields(e.read("seen")); r != "r-1" || strings.Join(seen, ",") != "one" {
		t.Errorf("resumed from %q with files %v, want r-1 with one only", r, seen)
	}
}

// TestCheckpointHandlerTravels: an in-process handler's checkpoint travels
// too: attempt 1 writes a file, checkpoints and fails; the retry on
// another worker finds the file and the token.
func TestCheckpointHandlerTravels(t *testing.T) {
	e := newEnv(t)
	st := openStore(t, testenv.S3(t, nil))
	rec := &recorder{}
	type seen struct {
		resume string
		data   string
		err    error
	}
	got := make(chan seen, 1)
	handlers := map[string]workers.Handler{"ck": func(ctx context.Context, r *workers.Run) error {
		if r.ResumeFrom == "" {
			if err := os.MkdirAll(r.CheckpointDir, 0o700); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(r.CheckpointDir, "state"), []byte("epoch 7"), 0o600); err != nil {
				return err
			}
			if err := r.Checkpoint("h-7"); err != nil {
				return err
			}
			return errors.New("transient failure after the checkpoint")
		}
		b, err := os.ReadFile(filepath.Join(r.CheckpointDir, "state"))
		got <- seen{resume: r.ResumeFrom, data: string(b), err: err}
		return nil
	}}
	oa := e.withStore(st, rec)
	oa.Handlers = handlers
	a := e.start(oa)
	spec := handlerSpec("ck")
	spec.Retryable, spec.MaxRetries = true, 2
	spec.Grace = jobs.Duration(5 * time.Second)
	j := e.submit(spec, queues.QueueCore)
	e.waitFor(j.ID, wait, "the retry queued from h-7", func(j jobs.Job) bool {
		return j.Attempt == 2 && j.State == jobs.StateQueued && j.Checkpoint == "h-7"
	})
	a.Stop()
	ob := e.withStore(st, rec)
	ob.Handlers = handlers
	e.start(ob)
	select {
	case s := <-got:
		if s.err != nil || s.resume != "h-7" || s.data != "epoch 7" {
			t.Errorf("the retry saw %+v, want h-7 with its file", s)
		}
	case <-time.After(retryWait):
		t.Fatal("the retry did not run")
	}
	if done := e.waitTerminal(j.ID, wait); done.State != jobs.StateSucceeded {
		t.Errorf("ended %s (%s)", done.State, done.LastError)
	}
}

// TestCheckpointCorruptFallsBack: a chunk of the newest checkpoint is
// lost from the store; the next attempt restores the one before, resumes
// from its token (not the record's newest), and an event says so.
func TestCheckpointCorruptFallsBack(t *testing.T) {
	e := newEnv(t)
	st := openStore(t, testenv.S3(t, nil))
	rec := &recorder{}
	a := e.start(e.withStore(st, rec))
	spec := e.shell(`cd "$BALLAST_CHECKPOINT_DIR" || exit 3
if [ -n "$BALLAST_RESUME_FROM" ]; then
  echo "$BALLAST_RESUME_FROM $(cat f)" > "$BALLAST_PARAM_DIR/resumed"; exit 0
fi
echo v1 > f && echo '{"checkpoint":"c-1"}'
while [ ! -e "$BALLAST_PARAM_DIR/more" ]; do sleep 0.05; done
echo v2 > f && echo '{"checkpoint":"c-2"}'
trap 'exit 0' TERM
while :; do sleep 0.05; done`)
	spec.Checkpointable, spec.Retryable = true, true
	j := e.submit(spec, queues.QueueCore)
	e.waitFor(j.ID, wait, "c-1 committed", func(j jobs.Job) bool { return j.Checkpoint == "c-1" })
	e.touch("more")
	e.waitFor(j.ID, wait, "c-2 committed", func(j jobs.Job) bool { return j.Checkpoint == "c-2" })
	a.Stop()
	ctx := context.Background()
	keys, err := checkpoints.New(e.store).Committed(ctx, j.ID)
	if err != nil || len(keys) != 2 {
		t.Fatalf("committed %v, %v; want 2", keys, err)
	}
	m, err := st.ReadManifest(ctx, j.ID, keys[0])
	if err != nil || m.Token != "c-2" {
		t.Fatalf("newest manifest %+v, %v", m, err)
	}
	for _, en := range m.Entries {
		if en.Path == "f" {
			if err := st.Bucket().Delete(ctx, "jobs/"+j.ID+"/chunks/"+en.Chunks[0]); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.start(e.withStore(st, rec))
	if done := e.waitTerminal(j.ID, wait); done.State != jobs.StateSucceeded {
		t.Fatalf("ended %s (%s)", done.State, done.LastError)
	}
	if r := strings.TrimSpace(e.read("resumed")); r != "c-1 v1" {
		t.Errorf("resumed %q, want c-1 with its file (c-1 v1)", r)
	}
	fb := rec.find(j.ID, events.TypeJobCheckpointFallback)
	if len(fb) != 1 {
		t.Fatalf("%d fallback events, want 1", len(fb))
	}
	if s, _ := events.ParseCheckpointSetback(fb[0]); s.Cause != events.FallbackCorrupt || s.Manifest != keys[0] || s.ResumeFrom != "c-1" {
		t.Errorf("fallback %+v; want %s corrupt, resuming from c-1", s, keys[0])
	}
}
