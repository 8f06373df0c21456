//go:build unix

package provider

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The scripts below implement the exec contract over a state file, one
// "ID POOL STATE" line per instance, kept next to them.

const launchScript = `#!/bin/sh
set -eu
dir=$(dirname "$0")
pool=$1 n=$2
if [ -f "$dir/stockout" ]; then
  echo "no spot capacity in eu-west-1" >&2
  exit 3
fi
i=0
while [ "$i" -lt "$n" ]; do
  c=$(cat "$dir/counter" 2>/dev/null || echo 0)
  c=$((c + 1))
  echo "$c" > "$dir/counter"
  echo "$pool-$c $pool running" >> "$dir/state"
  printf '{"id":"%s","pool":"%s","state":"launching"}\n' "$pool-$c" "$pool"
  i=$((i + 1))
done
`

const releaseScript = `#!/bin/sh
set -eu
dir=$(dirname "$0")
[ -f "$dir/state" ] || exit 0
awk -v id="$1" '$1 == id { $3 = "gone" } { print }' "$dir/state" > "$dir/state.tmp"
mv "$dir/state.tmp" "$dir/state"
`

const listScript = `#!/bin/sh
set -eu
dir=$(dirname "$0")
[ -f "$dir/state" ] || exit 0
while read -r id pool st; do
  printf '{"id":"%s","pool":"%s","state":"%s"}\n' "$id" "$pool" "$st"
done < "$dir/state"
`

// script writes an executable shell script into dir and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// newTestExec returns an Exec over the state-file scripts in a fresh
// directory; launch, when set, replaces the launch script's body.
func newTestExec(t *testing.T, launch string, timeout time.Duration) (*Exec, string) {
	t.Helper()
	dir := t.TempDir()
	if launch == "" {
		launch = launchScript
	}
	e, err := NewExec(ExecOptions{
		Launch:  []string{script(t, dir, "launch", launch)},
		Release: []string{script(t, dir, "release", releaseScript)},
		List:    []string{script(t, dir, "list", listScript)},
		Timeout: timeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e, dir
}

func TestExecLaunchListRelease(t *testing.T) {
	e, _ := newTestExec(t, "", 0)
	ctx := context.Background()
	insts, err := e.Launch(ctx, "spot", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(insts) != 2 || insts[0].ID != "spot-1" || insts[1].ID != "spot-2" {
		t.Fatalf("Launch = %+v, want spot-1 and spot-2", insts)
	}
	for _, in := range insts {
		if in.State != Launching || in.Pool != "spot" || in.LaunchedAt.IsZero() {
			t.Errorf("launched %+v, want launching in spot with a launch time", in)
		}
	}
	if err := e.Release(ctx, "spot-1"); err != nil {
		t.Fatal(err)
	}
	if err := e.Release(ctx, "never-was"); err != nil {
		t.Errorf("Release of an unknown ID: %v, want nil by contract", err)
	}
	list, err := e.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]State{}
	for _, in := range list {
		got[in.ID] = in.State
	}
	if len(list) != 2 || got["spot-1"] != Gone || got["spot-2"] != Running {
		t.Errorf("List = %+v, want spot-1 gone and spot-2 running", list)
	}
}

func TestExecStockOut(t *testing.T) {
	e, dir := newTestExec(t, "", 0)
	if err := os.WriteFile(filepath.Join(dir, "stockout"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	insts, err := e.Launch(context.Background(), "spot", 2)
	if !errors.Is(err, ErrStockOut) || errors.Is(err, ErrLaunchFailed) || len(insts) != 0 {
		t.Fatalf("Launch = %v, %v; want ErrStockOut only", insts, err)
	}
	if !strings.Contains(err.Error(), "no spot capacity in eu-west-1") {
		t.Errorf("error %q should carry the script's stderr", err)
	}
}

func TestExecPartialStockOut(t *testing.T) {
	e, _ := newTestExec(t, `#!/bin/sh
echo '{"id":"a","state":"running"}'
echo "only one left" >&2
exit 3
`, 0)
	insts, err := e.Launch(context.Background(), "spot", 3)
	var le *LaunchError
	if !errors.As(err, &le) || !errors.Is(err, ErrStockOut) || le.Started != 1 {
		t.Fatalf("err = %v, want a stock-out with 1 started", err)
	}
	if len(insts) != 1 || insts[0].ID != "a" || insts[0].Pool != "spot" || insts[0].StartedAt.IsZero() {
		t.Errorf("instances = %+v, want a, running in spot", insts)
	}
}

func TestExecLaunchFailure(t *testing.T) {
	e, _ := newTestExec(t, "#!/bin/sh\necho 'quota exceeded' >&2\nexit 1\n", 0)
	_, err := e.Launch(context.Background(), "spot", 1)
	if !errors.Is(err, ErrLaunchFailed) || errors.Is(err, ErrStockOut) {
		t.Fatalf("err = %v, want ErrLaunchFailed", err)
	}
	for _, want := range []string{"exit code 1", "quota exceeded"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q should contain %q", err, want)
		}
	}
}

func TestExecTooFewInstances(t *testing.T) {
	e, _ := newTestExec(t, "#!/bin/sh\necho '{\"id\":\"a\",\"state\":\"launching\"}'\n", 0)
	insts, err := e.Launch(context.Background(), "spot", 2)
	if !errors.Is(err, ErrLaunchFailed) || len(insts) != 1 {
		t.Fatalf("Launch = %v, %v; want 1 instance and ErrLaunchFailed", insts, err)
	}
}

func TestExecMalformedOutput(t *testing.T) {
	for name, bad := range map[string]string{
		"not json":     `not json`,
		"no id":        `{"pool":"spot","state":"running"}`,
		"bad state":    `{"id":"b","state":"booting"}`,
		"other pool":   `{"id":"b","pool":"ondemand","state":"running"}`,
		"gone":         `{"id":"b","state":"gone"}`,
		"duplicate id": `{"id":"a","state":"running"}`,
	} {
		t.Run(name, func(t *testing.T) {
			e, _ := newTestExec(t, "#!/bin/sh\necho '{\"id\":\"a\",\"state\":\"running\"}'\necho '"+bad+"'\n", 0)
			insts, err := e.Launch(context.Background(), "spot", 2)
			if !errors.Is(err, ErrMalformedOutput) || errors.Is(err, ErrLaunchFailed) {
				t.Fatalf("err = %v, want ErrMalformedOutput (not retryable)", err)
			}
			if !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), bad[:5]) {
				t.Errorf("error %q should name line 2 and quote it", err)
			}
			if len(insts) != 1 || insts[0].ID != "a" {
				t.Errorf("instances = %+v, want the good line's", insts)
			}
		})
	}
}

func TestExecListMalformed(t *testing.T) {
	e, dir := newTestExec(t, "", 0)
	if err := os.WriteFile(filepath.Join(dir, "state"), []byte("a spot running\nb  running\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := e.List(context.Background())
	if !errors.Is(err, ErrMalformedOutput) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("List err = %v, want ErrMalformedOutput naming line 2 (a line without pool)", err)
	}
}

func TestExecTimeoutKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "sleeper.pid")
	e, _ := newTestExec(t, "#!/bin/sh\nsleep 30 &\necho $! > "+pidFile+"\nwait\n", 300*time.Millisecond)
	start := time.Now()
	_, err := e.Launch(context.Background(), "spot", 1)
	if !errors.Is(err, ErrLaunchFailed) || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err = %v, want a timed-out ErrLaunchFailed", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Launch returned after %v, want about the 300ms timeout", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the script's child to be killed", func() bool { return processGone(pid) })
}

// processGone reports whether pid has exited. A zombie counts: it is dead,
// and whoever adopted it may be slow to reap it (or, in a container whose
// first process is not an init, may never do so).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func TestExecReleaseFailure(t *testing.T) {
	dir := t.TempDir()
	e, err := NewExec(ExecOptions{
		Launch:  []string{"/bin/true"},
		Release: []string{script(t, dir, "release", "#!/bin/sh\necho \"api down for $1\" >&2\nexit 1\n")},
		List:    []string{"/bin/true"},
	})
	if err != nil {
		t.Fatal(err)
	}
	err = e.Release(context.Background(), "i-1")
	if err == nil || !strings.Contains(err.Error(), "api down for i-1") {
		t.Fatalf("Release err = %v, want the script's stderr", err)
	}
}

func TestExecScriptArgs(t *testing.T) {
	// Fixed arguments come first, then the contract's.
	dir := t.TempDir()
	out := filepath.Join(dir, "args")
	e, err := NewExec(ExecOptions{
		Launch:  []string{"/bin/true"},
		Release: []string{"/bin/sh", script(t, dir, "rel", "echo \"$@\" > \"$OUT\"\n"), "--region", "eu"},
		List:    []string{"/bin/true"},
		Env:     []string{"OUT=" + out},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Release(context.Background(), "i-9"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(b)); got != "--region eu i-9" {
		t.Errorf("release args = %q, want %q", got, "--region eu i-9")
	}
}

func TestExecContextCancelled(t *testing.T) {
	e, _ := newTestExec(t, "", 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.Launch(ctx, "spot", 1)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrLaunchFailed) {
		t.Fatalf("err = %v, want context.Canceled, not a launch failure", err)
	}
}

func TestExecMissingScript(t *testing.T) {
	e, err := NewExec(ExecOptions{Launch: []string{filepath.Join(t.TempDir(), "nope")},
		Release: []string{"/bin/true"}, List: []string{"/bin/true"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Launch(context.Background(), "spot", 1); !errors.Is(err, ErrLaunchFailed) {
		t.Errorf("Launch with a missing script: %v, want ErrLaunchFailed", err)
	}
}

func TestNewExecValidates(t *testing.T) {
	if _, err := NewExec(ExecOptions{Launch: []string{"l"}, Release: []string{"r"}}); err == nil ||
		!strings.Contains(err.Error(), "list") {
		t.Errorf("NewExec without a list script: %v, want an error naming it", err)
	}
}
