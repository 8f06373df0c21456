package workers_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// The worker's credentials, as a Kubernetes manifest would load them with
// envFrom: the API token, the Redis password and the NATS token.
var workerSecrets = map[string]string{
	"BALLAST_API_TOKEN": "api-token-7f3a9c",
	"REDIS_PASSWORD":    "redis-pass-51be02",
	"NATS_TOKEN":        "nats-token-c0ffee",
}

// TestJobSeesNoWorkerSecrets runs a job that prints its environment, copies
// it into its checkpoint and stores it as the checkpoint itself: none of the
// worker's secrets may show in the log (Redis and local file) or the record.
func TestJobSeesNoWorkerSecrets(t *testing.T) {
	for k, v := range workerSecrets {
		t.Setenv(k, v) // t.Setenv: not parallel, the environment is the process's
	}
	e := newEnv(t)
	o := e.options()
	e.start(o)
	spec := e.shell(`env; env > "$BALLAST_CHECKPOINT_DIR/.ballast-checkpoint"; ls -ld "$BALLAST_CHECKPOINT_DIR"`)
	j := e.submit(spec, queues.QueueCore)
	got := e.waitTerminal(j.ID, wait)
	if got.State != jobs.StateSucceeded {
		t.Fatalf("state %s exit %s error %q, want succeeded", got.State, code(got), got.LastError)
	}
	var logged []string
	for _, l := range e.logs(j.ID) {
		logged = append(logged, l.Text)
	}
	file := filepath.Join(o.LogDir, j.ID+".1.log")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	places := map[string]string{"the Redis log": strings.Join(logged, "\n"), "the log file": string(b), "the checkpoint": got.Checkpoint}
	for where, text := range places {
		// The job's ID shows wherever its environment landed: a check that
		// finds no secret in an empty text proves nothing.
		if !strings.Contains(text, "BALLAST_JOB_ID="+j.ID) {
			t.Errorf("%s holds no BALLAST_JOB_ID line; the job's environment did not reach it:\n%s", where, text)
		}
		for name, secret := range workerSecrets {
			if strings.Contains(text, secret) || strings.Contains(text, name+"=") {
				t.Errorf("%s shows the worker's %s", where, name)
			}
		}
	}
	if !hasPrefixLine(logged, "drwx------") {
		t.Errorf("the checkpoint directory is not 0700: %v", logged)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("log file mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
}

// TestTemplateEnvAndPassEnv checks that a job sees exactly its built
// environment: the base variables, the contract, its parameters, its env and
// the names it passes that the worker has, and nothing else of the worker's.
func TestTemplateEnvAndPassEnv(t *testing.T) {
	t.Setenv("PASSED_ON", "from the worker")
	t.Setenv("NOT_PASSED", "stays with the worker")
	t.Setenv("LANG", "C.UTF-8")
	e := newEnv(t)
	o := e.options()
	e.start(o)
	spec := e.shell("")
	spec.Command = []string{"env"} // no shell: it would add variables of its own
	spec.Env = map[string]string{"TRAIN_MODE": "full", "EMPTY": ""}
	spec.PassEnv = []string{"PASSED_ON", "ABSENT_ON_WORKER"}
	j := e.submit(spec, queues.QueueCore)
	got := e.waitTerminal(j.ID, wait)
	if got.State != jobs.StateSucceeded {
		t.Fatalf("state %s exit %s error %q, want succeeded", got.State, code(got), got.LastError)
	}
	var env []string
	for _, l := range e.logs(j.ID) {
		env = append(env, l.Text)
	}
	want := []string{
		"BALLAST_ATTEMPT=1",
		"BALLAST_CHECKPOINT_DIR=" + filepath.Join(o.CheckpointDir, j.ID),
		"BALLAST_JOB_ID=" + j.ID,
		"BALLAST_PARAM_DIR=" + e.dir,
		"BALLAST_RESUME_FROM=",
		"EMPTY=",
		"LANG=C.UTF-8",
		"PASSED_ON=from the worker",
		"PATH=" + os.Getenv("PATH"),
		"TRAIN_MODE=full",
	}
	for _, name := range []string{"HOME", "TZ"} {
		if v, ok := os.LookupEnv(name); ok {
			want = append(want, name+"="+v)
		}
	}
	sort.Strings(want)
	sort.Strings(env)
	if strings.Join(env, "\n") != strings.Join(want, "\n") {
		t.Errorf("the job's environment is\n%s\nwant\n%s", strings.Join(env, "\n"), strings.Join(want, "\n"))
	}
}

func hasPrefixLine(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}
