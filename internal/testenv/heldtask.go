package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// HoldTask starts an asynq server of one slot on the asynq queue qname
// whose handler takes a task and never claims it: a worker frozen, or
// killed, between taking a delivery and its claim. It returns once the
// server holds a task; the server lets go and stops when the test ends.
func HoldTask(t testing.TB, rdb *redis.Client, qname string) {
	t.Helper()
	taken := make(chan struct{})
	release := make(chan struct{})
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{Concurrency: 1, Queues: map[string]int{qname: 1},
		TaskCheckInterval: 20 * time.Millisecond, LogLevel: asynq.FatalLevel, ShutdownTimeout: time.Second})
	if err := srv.Start(asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		close(taken)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return ctx.Err()
	})); err != nil {
		t.Fatalf("testenv.HoldTask: %v", err)
	}
	t.Cleanup(srv.Shutdown)
	t.Cleanup(func() { close(release) }) // runs first: the handler returns, then the server stops
	select {
	case <-taken:
	case <-time.After(10 * time.Second):
		t.Fatalf("testenv.HoldTask: no task of %s was taken within 10s", qname)
	}
}
