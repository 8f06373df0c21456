//go:build linux

package workers_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/logs"
	"github.com/ballastdev/ballast/workers"
)

// A worker process holding credentials the way `ballast worker` does: the
// Redis password and an API token in its environment (the *_env forms),
// and a secret read from a file into its memory (the *_file forms). The
// test binary is that worker when secretWorkerEnv is set, and the job that
// hunts for the secrets when probeEnv is.
const (
	secretWorkerEnv = "BALLAST_TEST_SECRET_WORKER"
	secretDirEnv    = "BALLAST_TEST_SECRET_DIR"
	secretRedisEnv  = "BALLAST_TEST_SECRET_REDIS"
	secretRunAsEnv  = "BALLAST_TEST_SECRET_RUN_AS"
	// What a deployment would name in redis.password_env and
	// http.api_token_env.
	redisPasswordEnv = "RUNAS_TEST_REDIS_PASSWORD"
	apiTokenEnv      = "RUNAS_TEST_API_TOKEN"
	// secretFileName is in the secret dir, mode 0600, like a
	// password_file.
	secretFileName = "secret"
	redisUser      = "ballast-worker"

	probeEnv = "RUNAS_PROBE"
	// secretPrefix starts every secret, so the probe can tell one in
	// whatever it reads without being told the secrets themselves.
	secretPrefix = "blstsecret-"
)

var secretRE = regexp.MustCompile(secretPrefix + "[0-9a-f]{24}")

// heldSecret keeps the file secret in the worker's memory, as a resolved
// credential is kept in a client's options.
var heldSecret string

// runSecretWorker runs the worker of TestRunAs until SIGTERM.
func runSecretWorker(ns string) int {
	dir := os.Getenv(secretDirEnv)
	b, err := os.ReadFile(filepath.Join(dir, secretFileName))
	if err != nil {
		fmt.Fprintln(os.Stderr, "secret worker:", err)
		return 1
	}
	heldSecret = strings.TrimSpace(string(b))
	if err := workers.GuardProcess(); err != nil {
		fmt.Fprintln(os.Stderr, "secret worker:", err)
		return 1
	}
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv(secretRedisEnv), Username: redisUser, Password: os.Getenv(redisPasswordEnv)})
	defer rdb.Close()
	w, err := workers.New(queues.NewStore(rdb, queues.StoreOptions{Namespace: ns}), workers.Options{
		Pool: "fixed", Slots: 1, Queues: []queues.Queue{queues.QueueCore},
		PollInterval: 5 * time.Millisecond, Heartbeat: 100 * time.Millisecond, DrainTimeout: 300 * time.Millisecond,
		LogDir: filepath.Join(dir, "log"), CheckpointDir: filepath.Join(dir, "ck"),
		RunAs:  os.Getenv(secretRunAsEnv),
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	if err == nil {
		err = w.Start(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "secret worker:", err)
		return 1
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	<-term
	w.Stop()
	if heldSecret == "" {
		return 2 // keeps heldSecret alive until here
	}
	return 0
}

// runProbe is the job: it reads every /proc/*/environ it can, the memory
// of its supervisor and of the worker above it, and the secret file, and
// prints each secret it finds, as a job that meant harm would, into its
// log. Lines starting "probe " say what it could read.
func runProbe() int {
	found := map[string]string{}
	prefix := []byte(secretPrefix)
	note := func(where string, b []byte) {
		// bytes.Index, not the regexp: the probe scans hundreds of
		// megabytes, and in a -race build a regexp takes minutes.
		for i := bytes.Index(b, prefix); i >= 0; {
			if m := secretRE.Find(b[i:min(len(b), i+len(secretPrefix)+24)]); m != nil {
				found[string(m)] = where
			}
			next := bytes.Index(b[i+1:], prefix)
			if next < 0 {
				break
			}
			i += 1 + next
		}
	}
	supervisor := os.Getppid()
	worker := parentOf(supervisor)
	fmt.Printf("probe uid=%d gid=%d groups=%v nnp=%s\n", os.Getuid(), os.Getgid(), groups(), statusField("NoNewPrivs"))
	fmt.Printf("probe supervisor=%d worker=%d\n", supervisor, worker)
	read, denied := 0, 0
	procs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			denied++
			continue
		}
		read++
		note(p, b)
	}
	fmt.Printf("probe environ read=%d denied=%d\n", read, denied)
	for _, p := range []struct {
		what string
		pid  int
	}{{"worker", worker}, {"supervisor", supervisor}} {
		_, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.pid))
		fmt.Printf("probe %s environ: %s\n", p.what, verdict(err))
		// The supervisor holds only the job's own environment; opening
		// its memory is the test, and scanning a second -race process
		// whole would double the probe's time.
		limit := int64(4096)
		if p.what == "worker" {
			limit = 1 << 40
		}
		began := time.Now()
		n, err := scanMemory(p.pid, limit, func(b []byte) { note(fmt.Sprintf("/proc/%d/mem", p.pid), b) })
		fmt.Printf("probe %s mem: %s (%d bytes in %s)\n", p.what, verdict(err), n, time.Since(began).Round(time.Millisecond))
	}
	b, err := os.ReadFile(os.Getenv("BALLAST_PARAM_SECRET_FILE"))
	fmt.Printf("probe secret file: %s\n", verdict(err))
	note("secret file", b)
	ck := os.Getenv(jobs.EnvCheckpointDir)
	err = os.WriteFile(filepath.Join(ck, workers.CheckpointMarker), []byte("probe-ck"), 0o600)
	fmt.Printf("probe checkpoint write: %s\n", verdict(err))
	if fi, err := os.Stat(ck); err == nil {
		fmt.Printf("probe checkpoint dir owner=%d mode=%04o\n", fi.Sys().(*syscall.Stat_t).Uid, fi.Mode().Perm())
	}
	_, err = os.ReadDir(filepath.Dir(ck))
	fmt.Printf("probe checkpoint root list: %s\n", verdict(err))
	for s, where := range found {
		fmt.Printf("FOUND %s in %s\n", s, where)
	}
	return 0
}

func verdict(err error) string {
	if err != nil {
		return "denied: " + err.Error()
	}
	return "read"
}

func parentOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

func groups() []int {
	gs, _ := syscall.Getgroups()
	return gs
}

func statusField(name string) string {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "?"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && k == name {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// scanMemory hands each anonymous writable mapping of pid (the heap, the
// stacks, Go's arenas: where a process keeps what it read at run time) to
// see, up to limit bytes, and returns how many bytes it read. Mappings
// of files hold only what is on disk, and the race detector's shadow
// memory, which is huge, is skipped by size.
func scanMemory(pid int, limit int64, see func([]byte)) (int64, error) {
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		return 0, err
	}
	defer mem.Close()
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return 0, err
	}
	var total int64
	for _, line := range strings.Split(string(maps), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 5 || !strings.HasPrefix(fields[1], "rw") || (len(fields) > 5 && !strings.HasPrefix(fields[5], "[")) {
			continue
		}
		lo, hi, _ := strings.Cut(fields[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end-start > 256<<20 {
			continue
		}
		if total >= limit {
			break
		}
		buf := make([]byte, min(end-start, uint64(limit-total)))
		n, _ := mem.ReadAt(buf, int64(start))
		total += int64(n)
		see(buf[:n])
	}
	return total, nil
}

// TestRunAs runs a job that hunts for the worker's credentials on a worker
// holding them as `ballast worker` does: with run_as it must find none,
// and without it, the same job must find them (or the hunt proves
// nothing).
func TestRunAs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("run_as needs a worker running as root; run the tests as root (CI does)")
	}
	t.Run("nobody", func(t *testing.T) {
		out, j, dirs := runProbeJob(t, "nobody")
		t.Logf("what the job run as nobody could read:\n%s", out.log)
		for _, want := range []string{"probe uid=65534 gid=65534", "nnp=1", "probe worker environ: denied", "probe worker mem: denied",
			"probe supervisor environ: denied", "probe supervisor mem: denied", "probe secret file: denied", "probe checkpoint write: read",
			// Its checkpoints are its own, and it cannot list the others'.
			"probe checkpoint dir owner=65534 mode=0700", "probe checkpoint root list: denied"} {
			if !strings.Contains(out.log, want) {
				t.Errorf("the probe's log lacks %q:\n%s", want, out.log)
			}
		}
		if m := regexp.MustCompile(`probe environ read=(\d+)`).FindStringSubmatch(out.log); m == nil || m[1] == "0" {
			t.Errorf("the probe read no environ at all (not even its own), so it proves nothing:\n%s", out.log)
		}
		for _, s := range out.secrets {
			if strings.Contains(out.log, s) || strings.Contains(out.file, s) {
				t.Errorf("a job run as nobody got the worker's secret %s:\n%s", s, out.log)
			}
		}
		if j.Checkpoint != "probe-ck" {
			t.Errorf("checkpoint = %q, want probe-ck: the job could not use its own checkpoint directory", j.Checkpoint)
		}
		checkMode(t, dirs.ck, 0, 0o711)
	})
	t.Run("worker's user", func(t *testing.T) {
		out, _, _ := runProbeJob(t, "")
		t.Logf("what the job run as root could read:\n%s", out.log)
		// Root reads everything: the environment, the memory and the
		// file. This is the case run_as exists for.
		for _, s := range out.secrets {
			if !strings.Contains(out.log, "FOUND "+s) {
				t.Errorf("a job run as the worker's user (root) did not find %s, so the probe cannot be trusted to find it:\n%s", s, out.log)
			}
		}
	})
}

// probeOut is what TestRunAs's job left: its log as stored in Redis, its
// log file, and the secrets the worker held.
type probeOut struct {
	log, file string
	secrets   []string
}

type probeDirs struct{ base, ck string }

// runProbeJob starts a worker holding secrets, with run_as runAs, runs the
// probe on it, and returns what the probe printed.
func runProbeJob(t *testing.T, runAs string) (probeOut, jobs.Job, probeDirs) {
	// The probe must be reachable by nobody: a directory of its own,
	// open to all, not the test's private temporary directories.
	base, err := os.MkdirTemp("", "ballast-runas-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(base, "probe")
	copyExecutable(t, probe)
	secrets := []string{newSecret(), newSecret(), newSecret()} // Redis password, API token, file
	if err := os.WriteFile(filepath.Join(base, secretFileName), []byte(secrets[2]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A Redis of the test's own, where the worker needs the password.
	c := testenv.RedisServer(t)
	ctx := context.Background()
	if err := c.Do(ctx, "ACL", "SETUSER", redisUser, "on", ">"+secrets[0], "~*", "&*", "+@all").Err(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	ns := "runas-" + testenv.RandomHex(4)
	store := queues.NewStore(c, queues.StoreOptions{Namespace: ns})

	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), secretWorkerEnv+"="+ns, secretDirEnv+"="+base, secretRunAsEnv+"="+runAs,
		secretRedisEnv+"="+c.Options().Addr, redisPasswordEnv+"="+secrets[0], apiTokenEnv+"="+secrets[1])
	workerLog := filepath.Join(t.TempDir(), "worker.log")
	lf, err := os.Create(workerLog)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); lf.Close(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			b, _ := os.ReadFile(workerLog)
			t.Logf("worker log:\n%s", b)
		}
	})

	spec := jobs.Spec{Command: []string{probe}, Env: map[string]string{probeEnv: "1"},
		Params: map[string]any{"secret_file": filepath.Join(base, secretFileName)},
		Class:  jobs.ClassCore, Rhythm: jobs.RhythmPeriodic, Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}
	sub, err := store.Submit(ctx, spec, queues.QueueCore)
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	var j jobs.Job
	testenv.Eventually(t, 150*time.Second, "the probe job to end", func() bool {
		j, err = store.Get(ctx, sub.Job.ID)
		return err == nil && j.State.Terminal()
	})
	if j.State != jobs.StateSucceeded {
		t.Fatalf("the probe job ended %s (%s), want succeeded", j.State, j.LastError)
	}
	lines, err := logs.New(store).Logs(ctx, j.ID, "", 10000)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.Stream + ": " + l.Text + "\n")
	}
	file, _ := os.ReadFile(filepath.Join(base, "log", j.ID+".1.log"))
	return probeOut{log: b.String(), file: string(file), secrets: secrets}, j, probeDirs{base: base, ck: filepath.Join(base, "ck")}
}

func newSecret() string { return secretPrefix + testenv.RandomHex(12) }

// copyExecutable copies the test binary to dst, mode 0755.
func copyExecutable(t *testing.T, dst string) {
	t.Helper()
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, src); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func checkMode(t *testing.T, path string, uid uint32, mode os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != uid || fi.Mode().Perm() != mode {
		t.Errorf("%s: owner %d, mode %04o; want owner %d, mode %04o", path, st.Uid, fi.Mode().Perm(), uid, mode)
	}
}
