package workers

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// TestWaitIdleEndsWithTheLastJobOrAtItsBound: the drain's wait returns
// once no job runs, or reports false at its bound. In a synctest bubble
// both happen at the bubble's exact instants, so the test also pins how
// late each may be: one poll.
func TestWaitIdleEndsWithTheLastJobOrAtItsBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, err := New(nil, Options{Slots: 1, LogDir: t.TempDir(), CheckpointDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		w.mu.Lock()
		w.jobs["j:1"] = newRunning(jobs.Job{ID: "j", Attempt: 1}, "w", w.opts.Now)
		w.mu.Unlock()
		// wait runs waitIdle(d) and checks it returned idle after want,
		// one poll late at most; a wait that never returns fails at a
		// minute of the bubble's time instead of hanging the test.
		wait := func(what string, d time.Duration, idle bool, want time.Duration) {
			t.Helper()
			start, got := time.Now(), make(chan bool, 1)
			go func() { got <- w.waitIdle(d) }()
			select {
			case g := <-got:
				if g != idle {
					t.Errorf("%s: waitIdle = %v, want %v", what, g, idle)
				}
			case <-time.After(time.Minute):
				t.Fatalf("%s: waitIdle did not return in a minute", what)
			}
			if took := time.Since(start); took < want || took > want+idlePoll {
				t.Errorf("%s after %v, want %v (one poll late at most)", what, took, want)
			}
		}

		wait("the bounded wait gave up", time.Second, false, time.Second)

		go func() {
			time.Sleep(5 * time.Second)
			w.mu.Lock()
			delete(w.jobs, "j:1")
			w.mu.Unlock()
		}()
		wait("the unbounded wait ended", 0, true, 5*time.Second)
	})
}
