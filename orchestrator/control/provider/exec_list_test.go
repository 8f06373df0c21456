//go:build unix

package provider

import (
	"context"
	"errors"
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

// A list script reports the stock-outs the cloud found after launch
// (stocked_out) and spot interruption notices (reclaim_at); a launch script
// may not claim a stock-out by state: it exits 3 for that.
func TestExecListReportsStockOutsAndReclaims(t *testing.T) {
	dir := t.TempDir()
	list := "#!/bin/sh\n" +
		`echo '{"id":"sp-1","pool":"spot","state":"stocked_out","error":"no capacity in eu-west-1a"}'` + "\n" +
		`echo '{"id":"sp-2","pool":"spot","state":"running","reclaim_at":"2026-11-29T12:02:00Z"}'` + "\n"
	launch := "#!/bin/sh\n" + `echo '{"id":"sp-3","state":"stocked_out"}'` + "\n"
	e, err := NewExec(ExecOptions{
		Launch:  []string{script(t, dir, "launch", launch)},
		Release: []string{script(t, dir, "release", releaseScript)},
		List:    []string{script(t, dir, "list", list)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, err := e.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	reclaim := time.Date(2026, 11, 29, 12, 2, 0, 0, time.UTC)
	if len(got) != 2 || got[0].State != StockedOut || got[0].Err != "no capacity in eu-west-1a" ||
		got[1].State != Running || !got[1].ReclaimAt.Equal(reclaim) {
		t.Fatalf("List = %+v, want sp-1 stocked out with its reason and sp-2 running with reclaim_at %s", got, reclaim)
	}
	if got[0].State.Live() || !got[0].State.Ended() {
		t.Fatal("a stocked-out instance must count as ended, holding no capacity")
	}
	_, err = e.Launch(ctx, "spot", 1)
	if !errors.Is(err, ErrMalformedOutput) || !strings.Contains(err.Error(), "stocked_out") {
		t.Fatalf("Launch err = %v, want ErrMalformedOutput: a launch line may not be stocked_out", err)
	}
}
