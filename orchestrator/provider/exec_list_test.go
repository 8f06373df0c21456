//go:build unix

package provider

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The controller lists every tick; the list script (a cloud CLI) must not run
// that often. Launches and releases made here show in the kept answer at once.
func TestExecReusesItsListWithinTheInterval(t *testing.T) {
	dir := t.TempDir()
	// The list script also counts its runs.
	counting := strings.Replace(listScript, "set -eu\n", "set -eu\necho run >> \"$(dirname \"$0\")/list-runs\"\n", 1)
	var mu sync.Mutex
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	e, err := NewExec(ExecOptions{
		Launch:    []string{script(t, dir, "launch", launchScript)},
		Release:   []string{script(t, dir, "release", releaseScript)},
		List:      []string{script(t, dir, "list", counting)},
		ListEvery: 10 * time.Second, Now: clock,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	runs := func() int {
		b, _ := os.ReadFile(filepath.Join(dir, "list-runs"))
		return strings.Count(string(b), "run")
	}
	states := func() map[string]State {
		t.Helper()
		list, err := e.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]State{}
		for _, in := range list {
			m[in.ID] = in.State
		}
		return m
	}

	if got := states(); len(got) != 0 || runs() != 1 {
		t.Fatalf("first list: %v after %d runs", got, runs())
	}
	if _, err := e.Launch(ctx, "od", 2); err != nil {
		t.Fatal(err)
	}
	if err := e.Release(ctx, "od-1"); err != nil {
		t.Fatal(err)
	}
	advance(5 * time.Second)
	got := states()
	if runs() != 1 {
		t.Fatalf("the list script ran %d times within the interval, want 1", runs())
	}
	if got["od-1"] != Releasing || got["od-2"] != Launching {
		t.Fatalf("kept answer %v, want od-1 releasing and od-2 launching", got)
	}
	advance(6 * time.Second)
	got = states()
	if runs() != 2 || got["od-1"] != Gone || got["od-2"] != Running {
		t.Fatalf("after the interval: %v after %d runs, want a fresh answer from the script", got, runs())
	}
}
