package testenv

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisServer starts a private redis-server on a loopback port with args
// added to its command line, for tests that change its settings (CONFIG
// SET, renamed commands) and so must not touch the shared one. It is
// stopped when the test ends. Without redis-server the test fails under CI
// and is skipped elsewhere.
func RedisServer(t testing.TB, args ...string) *redis.Client {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		Unavailable(t, "redis-server", err)
	}
	// The port is free when asked; another process could take it before
	// redis-server binds, which shows as a failed start, not a wrong pass.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	argv := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir()}, args...)
	cmd := exec.Command(bin, argv...)
	// Its own process group: a background save or AOF rewrite is a forked
	// child that must end with it, or it writes into the test's directory
	// while the directory is removed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port)})
	t.Cleanup(func() {
		// SHUTDOWN ends the rewrite child and waits for it; the group kill
		// covers a server that does not answer.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = c.ShutdownNoSave(ctx).Err()
		cancel()
		_ = c.Close()
		select {
		case <-exited:
		case <-time.After(3 * time.Second):
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	deadline := time.Now().Add(5 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return c
		}
		select {
		case <-exited:
			t.Fatalf("redis-server %v exited before answering: %v", argv, err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on port %d did not answer within 5s: %v", port, err)
		}
	}
}
