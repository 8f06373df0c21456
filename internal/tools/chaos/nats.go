package chaos

import (
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// natsServer is an embedded NATS server with JetStream that can be stopped
// and started again on the same port with the same store, which is what a
// NATS outage looks like to its clients: connections drop, reconnects are
// refused for a while, then succeed.
type natsServer struct {
	port int
	dir  string

	mu  sync.Mutex
	srv *server.Server
}

// startNATS starts the server on a free port with its store in dir.
func startNATS(dir string) (*natsServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	n := &natsServer{port: port, dir: dir}
	return n, n.start()
}

func (n *natsServer) start() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.srv != nil {
		return nil
	}
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: n.port, JetStream: true, StoreDir: n.dir,
		NoLog: true, NoSigs: true})
	if err != nil {
		return fmt.Errorf("embedded NATS: %w", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return fmt.Errorf("embedded NATS did not start on port %d within 10s", n.port)
	}
	n.srv = srv
	return nil
}

// stop shuts the server down and waits until it has; safe when stopped.
func (n *natsServer) stop() {
	n.mu.Lock()
	srv := n.srv
	n.srv = nil
	n.mu.Unlock()
	if srv != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
	}
}

// url is the client URL, the same across restarts.
func (n *natsServer) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.port) }
