package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/checkpoints"
)

// crashChildEnv carries a crashPlan to a child process (see TestMain).
const crashChildEnv = "BALLAST_CKPT_CRASH_CHILD"

// crashPlan is what the uploading child saves, and where.
type crashPlan struct {
	Store   string `json:"store"`
	Redis   string `json:"redis"`
	NS      string `json:"ns"`
	Worker  string `json:"worker"`
	Job     string `json:"job"`
	Attempt int    `json:"attempt"`
	Dir     string `json:"dir"`
	Token   string `json:"token"`
	// Base is the committed manifest the attempt restored.
	Base  string `json:"base"`
	Chunk int64  `json:"chunk"`
}

// crashChild is the worker's uploader in a process of its own: it saves
// one checkpoint as plan says, printing on stdout each step it reaches
// ("start", "manifest", "commit", "done KEY") and waiting for a line on
// stdin before it goes on, so that the parent can kill it in that step.
func crashChild(raw string) int {
	var p crashPlan
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx := context.Background()
	st, err := Open(ctx, p.Store)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	rdb := redis.NewClient(&redis.Options{Addr: p.Redis})
	// A connection made now keeps the dial out of the commit's moment.
	if err := rdb.Ping(ctx).Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	qs := checkpoints.New(queues.NewStore(rdb, queues.StoreOptions{Namespace: p.NS}))
	var base *Manifest
	if p.Base != "" {
		if base, err = st.ReadManifest(ctx, p.Job, p.Base); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	s, err := NewSaver(st, qs.Ledger(p.Worker), p.Job, p.Attempt, base, Options{ChunkSize: p.Chunk, Concurrency: 4})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	// Each step waits for the parent's word to go on, so that the
	// parent's kill lands a chosen time into the step, not after it.
	in := bufio.NewReader(os.Stdin)
	say := func(what string) {
		fmt.Fprintln(os.Stdout, what)
		if _, err := in.ReadString('\n'); err != nil {
			os.Exit(3)
		}
	}
	s.beforeManifest = func(context.Context) { say("manifest") }
	s.beforeCommit = func(context.Context) { say("commit") }
	say("start")
	saved, err := s.Save(ctx, p.Dir, p.Token)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	say("done " + saved.Key)
	return 0
}

// TestCrashTrials: an uploading process is SIGKILLed at random moments of
// its save (during the chunks, at the manifest write, at the commit); the
// job's next attempt, on the other worker, restores either the new
// checkpoint or the previous one, whole: no hash mismatch, no committed
// token whose files are missing, and the record's resume token is the
// checkpoint restored. Half the trials use an S3 server in this process,
// half a file:// store. BALLAST_CKPT_TRIALS sets the number (default 20).
func TestCrashTrials(t *testing.T) {
	n := 20
	if v := os.Getenv("BALLAST_CKPT_TRIALS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 2 {
			t.Fatalf("BALLAST_CKPT_TRIALS=%q: want a number of 2 or more", v)
		}
	}
	t.Run("s3", func(t *testing.T) { crashTrials(t, s3Server(t, nil), n/2) })
	t.Run("file", func(t *testing.T) { crashTrials(t, "file://"+t.TempDir(), n-n/2) })
}

// crashShape is the job's directory in the trials: big enough that a save
// takes a while, small enough for many trials.
var crashShape = shape{bigs: 4, big: 1 << 20, smalls: 20, chunk: 64 << 10}

// Where a trial kills the uploader: after a random part of a whole save,
// or just after it reports reaching the manifest write or the commit.
const (
	killDuring = iota
	killAtManifest
	killAtCommit
)

var killNames = []string{"during the upload", "at the manifest write", "at the commit"}

func crashTrials(t *testing.T, storeURL string, n int) {
	ctx := context.Background()
	st := openStore(t, storeURL)
	qs, j, ns := runningJobIn(t)
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d", seed)
	root := t.TempDir()
	dirs := map[string]string{"wA": filepath.Join(root, "wA", j.ID), "wB": filepath.Join(root, "wB", j.ID)}
	other := map[string]string{"wA": "wB", "wB": "wA"}
	worker := "wA"
	crashShape.fill(t, dirs[worker], 1)
	writeFile(t, dirs[worker], ".ballast-checkpoint", []byte("step=0"), 0o600)
	trees := map[string]map[string]string{"step=0": tree(t, dirs[worker])}

	plan := crashPlan{Store: storeURL, Redis: testenv.RedisAddr(), NS: ns, Job: j.ID, Chunk: crashShape.chunk}
	run := func(token string, kill func(step string) time.Duration) ([]string, []time.Duration) {
		t.Helper()
		p := plan
		p.Worker, p.Attempt, p.Dir, p.Token = worker, j.Attempt, dirs[worker], token
		return runUploader(t, p, kill)
	}

	// The first checkpoint is saved whole; its steps' times calibrate
	// the kills: anywhere in the first two thirds of a whole save (the
	// later ones write half as much), or within one and a half times the
	// time the manifest write or the commit took.
	steps, at := run("step=0", nil)
	if len(steps) != 4 || !strings.HasPrefix(steps[3], "done ") {
		t.Fatalf("first save did not finish: %v", steps)
	}
	whole, manifestWrite, commit := at[3], at[2]-at[1], at[3]-at[2]
	t.Logf("a whole save: %v; its manifest write %v, its commit %v", whole, manifestWrite, commit)
	prev := "step=0"
	plan.Base = mustCommitted(t, qs, j.ID)[0]

	var outcomes [3][2]int // kill kind, then previous (0) or new (1)
	finished := 0
	for i := 1; i <= n; i++ {
		// The job writes its next state: two big files, a small one and
		// the token file change.
		dir := dirs[worker]
		writeFile(t, dir, fmt.Sprintf("shard-%d.bin", i%crashShape.bigs), randBytes(uint64(1000*i), int(crashShape.big)), 0o600)
		writeFile(t, dir, fmt.Sprintf("shard-%d.bin", (i+1)%crashShape.bigs), randBytes(uint64(1000*i+1), int(crashShape.big)), 0o600)
		writeFile(t, dir, "meta/00/small-000.json", randBytes(uint64(1000*i+2), 100+i), 0o644)
		token := fmt.Sprintf("step=%d", i)
		writeFile(t, dir, ".ballast-checkpoint", []byte(token), 0o600)
		trees[token] = tree(t, dir)

		kind := i % 3
		steps, _ := run(token, func(step string) time.Duration {
			switch {
			case kind == killDuring && step == "start":
				return time.Duration(rng.Int64N(int64(whole * 2 / 3)))
			case kind == killAtManifest && step == "manifest":
				return time.Duration(rng.Int64N(int64(manifestWrite * 3 / 2)))
			case kind == killAtCommit && step == "commit":
				// A commit is sent within microseconds of the word
				// to go, and lands once sent: a third of these kills
				// come before that word.
				if rng.IntN(3) == 0 {
					return killBeforeGo
				}
				return time.Duration(rng.Int64N(int64(commit * 3 / 2)))
			}
			return -1
		})
		if last := steps[len(steps)-1]; strings.HasPrefix(last, "done ") {
			finished++
		}

		// The worker is gone: the job moves on to the other worker,
		// which fences the dead attempt out of any commit still on
		// its way. Nothing uploads now, so a collection with no grace
		// must leave every committed checkpoint whole.
		next := moveTo(t, qs, j, worker, other[worker])
		if _, err := Collect(ctx, st, qs.Ledger(other[worker]), j.ID, 0, time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		committed := mustCommitted(t, qs, j.ID)
		left := objects(t, st, "jobs/"+j.ID+"/")
		for _, k := range committed {
			m, err := st.ReadManifest(ctx, j.ID, k)
			if err != nil {
				t.Fatalf("trial %d: committed manifest %s: %v", i, k, err)
			}
			for name := range m.chunkSet() {
				if !left[chunkKey(j.ID, name)] {
					t.Fatalf("trial %d: chunk %s of committed %s (token %q) is missing", i, name, k, m.Token)
				}
			}
		}

		worker, j = other[worker], next
		r, err := RestoreLatest(ctx, st, qs.Ledger(worker), j.ID, dirs[worker], RestoreOptions{})
		if err != nil || len(r.Fallbacks) != 0 {
			t.Fatalf("trial %d (killed %s after %v): restore: %v, fallbacks %v", i, killNames[kind], steps, err, r.Fallbacks)
		}
		got := r.Manifest.Token
		if got != token && got != prev {
			t.Fatalf("trial %d: restored %q, want %q or %q", i, got, token, prev)
		}
		if rec, err := qs.Get(ctx, j.ID); err != nil || rec.Checkpoint != got {
			t.Fatalf("trial %d: the record resumes from %q, the files are %q (%v)", i, rec.Checkpoint, got, err)
		}
		sameTree(t, tree(t, dirs[worker]), trees[got])
		if t.Failed() {
			t.Fatalf("trial %d (killed %s after %v): the restored files are not checkpoint %q's", i, killNames[kind], steps, got)
		}
		if got == token {
			outcomes[kind][1]++
		} else {
			outcomes[kind][0]++
		}
		prev, plan.Base = got, r.Key
	}
	for k, o := range outcomes {
		t.Logf("killed %s: %d restored the previous checkpoint, %d the new one", killNames[k], o[0], o[1])
	}
	t.Logf("%d trials (%d finished before the kill): 0 hash mismatches, 0 missing files", n, finished)
}

// killBeforeGo, from runUploader's kill, kills the child in the step it
// reported, before it starts the step's work.
const killBeforeGo = time.Duration(-2)

// runUploader runs crashChild with plan in a child process. kill is told
// each step the child reports and returns how long after letting it go on
// to SIGKILL the child, killBeforeGo, or -1 to let it go on; nil lets it
// finish. It
// returns the steps the child reported, and when (from the first).
func runUploader(t *testing.T, plan crashPlan, kill func(step string) time.Duration) ([]string, []time.Duration) {
	t.Helper()
	raw, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), crashChildEnv+"="+string(raw))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var steps []string
	var at []time.Duration
	var first time.Time
	var killer *time.Timer
	limit := time.NewTimer(time.Minute)
	defer limit.Stop()
	for open := true; open; {
		select {
		case line, ok := <-lines:
			if !ok {
				open = false
				break
			}
			if first.IsZero() {
				first = time.Now()
			}
			steps = append(steps, line)
			at = append(at, time.Since(first))
			d := time.Duration(-1)
			if kill != nil && killer == nil {
				d = kill(line)
			}
			if d == killBeforeGo {
				_ = cmd.Process.Kill()
				killer = time.NewTimer(time.Hour) // no more kills
				continue
			}
			// The child may be dead already (a write error) or done.
			_, _ = in.Write([]byte("go\n"))
			if d >= 0 {
				killer = time.AfterFunc(d, func() { _ = cmd.Process.Kill() })
			}
		case <-limit.C:
			_ = cmd.Process.Kill()
			t.Errorf("uploader still running after a minute: %v", steps)
		}
	}
	err = cmd.Wait()
	if killer != nil {
		killer.Stop()
	}
	if err != nil && !killed(err) {
		t.Fatalf("uploader: %v: %s (steps %v)", err, stderr.String(), steps)
	}
	if len(steps) == 0 {
		steps, at = []string{""}, []time.Duration{0}
	}
	return steps, at
}

// killed reports whether a child process ended by SIGKILL.
func killed(err error) bool {
	ee, ok := err.(*exec.ExitError)
	if !ok {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

func mustCommitted(t *testing.T, qs *jobStore, jobID string) []string {
	t.Helper()
	keys, err := qs.Ledger("").Committed(context.Background(), jobID)
	if err != nil || len(keys) == 0 {
		t.Fatalf("committed checkpoints: %v %v", keys, err)
	}
	return keys
}
