package testenv

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// NATSCluster starts n embedded NATS servers with JetStream, clustered
// over routes on loopback ports, and waits until JetStream has a meta
// leader. Each is stopped when the test ends (a test may stop one sooner:
// Shutdown twice is harmless). URLs joins their client URLs for a
// connection that fails over.
func NATSCluster(t testing.TB, n int) []*server.Server {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
	}
	var routes []*url.URL
	for _, p := range ports {
		routes = append(routes, &url.URL{Scheme: "nats", Host: fmt.Sprintf("127.0.0.1:%d", p)})
	}
	name := "bt" + RandomHex(4)
	servers := make([]*server.Server, n)
	for i := range servers {
		opts := &server.Options{
			ServerName: fmt.Sprintf("%s-%d", name, i),
			Host:       "127.0.0.1",
			Port:       server.RANDOM_PORT,
			JetStream:  true,
			StoreDir:   t.TempDir(),
			NoLog:      true,
			NoSigs:     true,
			Cluster:    server.ClusterOpts{Name: name, Host: "127.0.0.1", Port: ports[i]},
			Routes:     routes,
		}
		s, err := server.NewServer(opts)
		if err != nil {
			t.Fatalf("testenv.NATSCluster: %v", err)
		}
		go s.Start()
		t.Cleanup(func() {
			s.Shutdown()
			s.WaitForShutdown()
		})
		servers[i] = s
	}
	for _, s := range servers {
		if !s.ReadyForConnections(10 * time.Second) {
			t.Fatal("testenv.NATSCluster: a server is not ready within 10s")
		}
	}
	Eventually(t, 20*time.Second, "a JetStream meta leader in the cluster", func() bool {
		for _, s := range servers {
			if s.JetStreamIsLeader() {
				return true
			}
		}
		return false
	})
	return servers
}

// URLs is the client URLs of servers, comma-separated, as nats.Connect
// takes a list.
func URLs(servers []*server.Server) string {
	var us []string
	for _, s := range servers {
		us = append(us, s.ClientURL())
	}
	return strings.Join(us, ",")
}
