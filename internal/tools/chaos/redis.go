package chaos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNoRedisServer is returned when redis-server is not on the PATH.
var ErrNoRedisServer = errors.New("redis-server not found on the PATH (install Redis: apt install redis-server, brew install redis)")

// redisServer is the run's own redis-server: a loopback port, its own
// directory, append-only persistence as production should run it.
type redisServer struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}
}

// startRedis starts redis-server with its data in dir and its log in
// logPath, and waits until it answers.
func startRedis(ctx context.Context, dir, logPath string) (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNoRedisServer
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--maxmemory-policy", "noeviction")
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group: an AOF rewrite is a forked child that must end
	// with it, and a Ctrl-C in the terminal must not reach it before the run
	// has stopped its clients.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting redis-server: %w", err)
	}
	r := &redisServer{cmd: cmd, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(r.done) }()
	c := redis.NewClient(&redis.Options{Addr: r.addr})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		err := c.Ping(pctx).Err()
		cancel()
		if err == nil {
			return r, nil
		}
		select {
		case <-r.done:
			return nil, fmt.Errorf("redis-server exited before answering (port %d taken?); see %s", port, filepath.Base(logPath))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			r.stop()
			return nil, fmt.Errorf("redis-server on port %d did not answer within 10s: %w", port, err)
		}
	}
}

// pause freezes the server: connections stay open and hang, the harder case
// for a client than a refused connection.
func (r *redisServer) pause() error { return r.cmd.Process.Signal(syscall.SIGSTOP) }

// resume undoes pause.
func (r *redisServer) resume() error { return r.cmd.Process.Signal(syscall.SIGCONT) }

// stop ends the server and its children, paused or not. Safe to call twice.
func (r *redisServer) stop() {
	pgid := r.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGCONT)
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-r.done
	}
}

// freePort asks the kernel for a free loopback port. Another process could
// take it before it is bound, which shows as a failed start, not a wrong run.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
