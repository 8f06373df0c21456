package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// privateRedis starts a non-persistent redis-server of the test's own on a
// free port and returns its process and address.
func privateRedis(t *testing.T) (*exec.Cmd, string) {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		testenv.Unavailable(t, "redis-server", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		<-done
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	probe := redis.NewClient(&redis.Options{Addr: addr})
	defer probe.Close()
	testenv.Eventually(t, 10*time.Second, "private redis-server answers PING", func() bool {
		select {
		case <-done:
			t.Fatalf("redis-server exited (port %d taken?)", port)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		return probe.Ping(ctx).Err() == nil
	})
	return cmd, addr
}

func TestRedisOutageDuringSubmission(t *testing.T) {
	proc, addr := privateRedis(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true,
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
	t.Cleanup(func() { _ = rdb.Close() })
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: "outage"})
	sub := &controller.Submitter{Catalog: countCatalog(t), Store: store, Router: controller.Router{}, Logger: quietLogger()}

	submit := func(i int) (string, bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		r, err := sub.Submit(ctx, countSubmission(i, fmt.Sprintf("key-%d", i)))
		return r.JobID, r.Duplicate, err
	}

	const before = 20
	ids := map[int]string{}
	for i := range before {
		id, dup, err := submit(i)
		if err != nil || dup {
			t.Fatalf("submission %d before the outage: dup=%v err=%v", i, dup, err)
		}
		ids[i] = id
	}

	// The outage: the server is frozen, so connections hang rather than
	// being refused, the harder case for a client.
	if err := proc.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP: %v", err)
	}
	const during = 5
	for i := before; i < before+during; i++ {
		start := time.Now()
		id, _, err := submit(i)
		took := time.Since(start)
		if err == nil {
			t.Fatalf("submission %d during the outage succeeded (job %s)", i, id)
		}
		if !errors.Is(err, jobs.ErrUnavailable) {
			t.Errorf("submission %d during the outage: %v, want jobs.ErrUnavailable", i, err)
		}
		if took > 3*time.Second {
			t.Errorf("submission %d during the outage took %s with a 1s deadline", i, took)
		}
	}

	if err := proc.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatalf("SIGCONT: %v", err)
	}
	// The outage submissions are retried with their keys: each now
	// succeeds, whether or not the frozen server later applied the write.
	testenv.Eventually(t, 15*time.Second, "a submission succeeds after SIGCONT", func() bool {
		id, _, err := submit(before)
		if err == nil {
			ids[before] = id
		}
		return err == nil
	})
	for i := before + 1; i < before+during+5; i++ {
		id, _, err := submit(i)
		if err != nil {
			t.Fatalf("submission %d after the outage: %v", i, err)
		}
		ids[i] = id
	}

	// Every key maps to one job; a second retry of each is a duplicate.
	seen := map[string]int{}
	for i, id := range ids {
		if prev, ok := seen[id]; ok {
			t.Errorf("keys %d and %d share job %s", prev, i, id)
		}
		seen[id] = i
		again, dup, err := submit(i)
		if err != nil || !dup || again != id {
			t.Errorf("resubmission of key %d: id=%s dup=%v err=%v, want id=%s dup=true", i, again, dup, err, id)
		}
	}

	// The jobs accepted before the outage are intact.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := range before {
		j, err := store.Get(ctx, ids[i])
		if err != nil {
			t.Fatalf("job %d (%s) after the outage: %v", i, ids[i], err)
		}
		if j.State != jobs.StateQueued || j.Attempt != 1 || fmt.Sprint(j.Spec.Params["i"]) != strconv.Itoa(i) ||
			j.Spec.IdempotencyKey != fmt.Sprintf("key-%d", i) {
			t.Errorf("job %d after the outage: state=%s attempt=%d params=%v key=%q", i, j.State, j.Attempt, j.Spec.Params, j.Spec.IdempotencyKey)
		}
	}
	list, err := store.List(ctx, queues.ListOptions{Limit: 1000})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(list) != len(ids) {
		t.Errorf("%d jobs recorded for %d idempotency keys", len(list), len(ids))
	}
	stats, err := store.QueueStats(ctx)
	if err != nil {
		t.Fatalf("QueueStats: %v", err)
	}
	pending := 0
	for _, s := range stats {
		pending += s.Pending
	}
	if pending != len(ids) {
		t.Errorf("%d pending tasks for %d jobs", pending, len(ids))
	}
}
