package workers_test

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// killBacklog is how many jobs wait in the queue when the worker is
// killed: about what the chaos run that found requeued jobs starting
// minutes late had queued.
const killBacklog = 800

// restartLimit bounds how long one iteration waits for the killed
// worker's jobs to start again; without readmission they wait behind the
// whole backlog, far longer.
const restartLimit = 5 * time.Minute

// BenchmarkKillToRestartWithBacklog measures, with killBacklog jobs
// queued behind them, the time from a SIGKILL of a worker process running
// two jobs until both run again on the worker that replaced it: the
// controller's recovery (its default worker TTL and recovery interval,
// run here as the leader runs them) requeues them, and the new worker,
// busy with the backlog, must take them next. The goal is within 10 s;
// most of it is the worker TTL.
//
//	go test ./workers/ -run '^$' -bench KillToRestart -benchtime 3x
func BenchmarkKillToRestartWithBacklog(b *testing.B) {
	var total time.Duration
	for range b.N {
		total += killToRestart(b)
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/restart")
	b.ReportMetric(0, "ns/op") // the figure above is the one that means something
}

// killToRestart is one iteration of BenchmarkKillToRestartWithBacklog.
func killToRestart(b *testing.B) time.Duration {
	b.Helper()
	e := newEnv(b)
	ctx := context.Background()
	long := e.shell("sleep 600")
	long.Timeout = jobs.Duration(time.Hour)
	helper := e.startHelperWorker()
	mine := []jobs.Job{e.submit(long, queues.QueueCore), e.submit(long, queues.QueueCore)}
	for _, j := range mine {
		e.waitFor(j.ID, 20*time.Second, "running on the worker to kill", func(j jobs.Job) bool { return j.State == jobs.StateRunning })
	}
	// Short jobs, as in the chaos run: the new worker's slots free up
	// every few hundred milliseconds, and what it takes next is the order
	// under test.
	items := make([]queues.BatchItem, killBacklog)
	for i := range items {
		items[i] = queues.BatchItem{Spec: e.shell("sleep 0.3"), Queue: queues.QueueCore}
	}
	if _, err := e.store.SubmitBatch(ctx, items); err != nil {
		b.Fatal(err)
	}

	// The leader's recovery loop, with the controller's defaults.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(controller.DefaultRecoverEvery)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				_, _ = e.store.RecoverDeadWorkers(ctx, controller.DefaultWorkerTTL)
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()

	killed := time.Now()
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		b.Fatal(err)
	}
	// Its slots come back as a new worker, as a supervisor restarts one.
	o := e.options()
	o.Queues = []queues.Queue{queues.QueueCore}
	e.start(o)
	var requeued, started time.Time
	for _, j := range mine {
		now := e.waitFor(j.ID, restartLimit, "running again after its worker was killed", func(j jobs.Job) bool {
			return j.State == jobs.StateRunning && j.Attempt > 1
		})
		if now.QueuedAt.After(requeued) {
			requeued = now.QueuedAt
		}
		if now.StartedAt.After(started) {
			started = now.StartedAt
		}
	}
	d := started.Sub(killed)
	b.Logf("%d queued: kill to requeue %v, requeue to start %v, kill to start %v", killBacklog,
		requeued.Sub(killed).Round(time.Millisecond), started.Sub(requeued).Round(time.Millisecond), d.Round(time.Millisecond))
	return d
}
